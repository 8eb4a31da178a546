// What kibench and a worker process say to each other
// (lib/worker/remote_implementation.hpp, kernels/plugin/worker_server.hpp):
// each request is an object with "op" (prepare, poison, before_sample,
// run, timed_run, sustained, outputs, memory, flush, wait_idle, power_load,
// inputs, release, exit); each reply is {"ok": true, ...} or {"ok": false, "status",
// "reason"}, the lane's failure as the run records it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lib/harness/sustained.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/implementation/implementation_failure.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/json/value.hpp"

namespace kibench::worker {

// One timed call, as the worker's timer measured it.
struct RemoteSample {
  double ns = 0.0;
  std::optional<double> clock_mhz;
  std::optional<double> power_w;
};

// Members of a message; a missing or mistyped one is a broken worker
// (std::runtime_error naming it).
std::string string_member(const json::Value &message, std::string_view key);
double number_member(const json::Value &message, std::string_view key);
json::Object object_member(const json::Value &message, std::string_view key);

// A double exactly, NaN and infinities included (the loss of a broken
// lane): its bits as a hexadecimal string.
json::Value double_to_json(double x);
double double_from_json(const json::Value &value);

// Fingerprints travel as hexadecimal strings: JSON numbers are doubles.
json::Value fingerprints_to_json(const std::vector<InputFingerprint> &fingerprints);
std::vector<InputFingerprint> fingerprints_from_json(const json::Value &value);

json::Object sample_to_json(const RemoteSample &sample);
RemoteSample sample_from_json(const json::Value &reply);

// The sustained phase as the worker measured it; {"measured": false} where
// it had no power monitor.
json::Object sustained_to_json(const std::optional<SustainedMeasurement> &sustained);
std::optional<SustainedMeasurement> sustained_from_json(const json::Value &reply);

json::Object memory_to_json(const MemoryUse &memory);
MemoryUse memory_from_json(const json::Value &reply);

// The outputs' layout in the shared memory: the loss, and for each
// gradient its element type, count and byte offset.
struct OutputSlot {
  const char *name;
  TensorRef OutputView::*member;
};
inline constexpr OutputSlot kOutputSlots[] = {
    {"grad_student_input", &OutputView::grad_student_input},
    {"grad_student_weight", &OutputView::grad_student_weight},
    {"grad_student_bias", &OutputView::grad_student_bias},
};
// The bytes of `out`'s gradient tensors (every slot above), as stored.
std::size_t gradient_bytes(const OutputView &out);
// Host views into [data, data + bytes); throws std::runtime_error for a
// layout that does not fit.
OutputView output_view_from_json(const json::Value &reply, const unsigned char *data, std::size_t bytes);

json::Object failure_to_json(const LaneFailure &failure);
std::optional<LaneFailure> failure_from_reply(const json::Value &reply);

std::string_view element_type_name(ElementType type);
std::optional<ElementType> element_type_from_name(std::string_view name);

} // namespace kibench::worker
