// The generated inputs of one workload, shared by every implementation in a
// run: the host copy (CPU Philox) and the device copy (GPU Philox, bit-
// identical) are each made on first use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/workload/workload.hpp"

namespace kibench {

// bf16 tensors as raw bit patterns, row-major; jsd's fp32 log-probabilities
// as floats (the LM-head tensors are then empty, and theirs for the others).
struct HostInputs {
  std::vector<std::uint16_t> student_input;  // [T, Hs]
  std::vector<std::uint16_t> student_weight; // [V, Hs]
  std::vector<std::uint16_t> teacher_input;  // [T, H]
  std::vector<std::uint16_t> teacher_weight; // [V, H]
  std::vector<std::int64_t> target;          // [T]
  std::vector<std::uint16_t> student_bias;   // [V] or empty
  std::vector<std::uint16_t> teacher_bias;   // [V] or empty
  std::vector<float> student_log_probs;      // jsd: log q [T, V]
  std::vector<float> teacher_log_probs;      // jsd: log p [T, V]
};

// One copy of one input tensor, fingerprinted (lib/inputs/fingerprint.hpp).
struct InputFingerprint {
  std::string tensor; // "teacher_weight"
  std::string copy;   // "host" or "device"
  std::uint64_t value = 0;
  bool operator==(const InputFingerprint &) const = default;
};

// The workload's input set number `variant`: 0 is the workload's own
// seeds; variant k adds k·φ (φ = 0x9E3779B97F4A7C15) to every generator's
// seed, mod 2⁶⁴. Only the seeds differ, so shapes, scalars, policy and
// digests are the workload's.
[[nodiscard]] Workload input_variant(const Workload &workload, int variant);

class InputSet {
public:
  explicit InputSet(const Workload &workload) : workload_(workload) {}

  [[nodiscard]] const Workload &workload() const { return workload_; }
  // Which input set the copies hold (input_variant): kibench rotates them
  // between timed samples, so that a lane that returns what it computed
  // for other inputs fails its check.
  [[nodiscard]] int variant() const { return variant_; }
  // The workload the copies are generated from: the current variant's.
  [[nodiscard]] const Workload &generator_workload() const { return variant_ == 0 ? workload_ : *variant_workload_; }
  // Switches to input set `variant`, generating the host copy again in
  // place; the device copy is the backend's (Backend::restore_inputs).
  void set_variant(int variant);
  // Generated on the CPU at first call.
  const HostInputs &host();
  [[nodiscard]] bool has_host() const { return host_ != nullptr; }
  // Every host tensor's fingerprint (none before the host copy is made).
  [[nodiscard]] std::vector<InputFingerprint> host_fingerprints() const;
  // The host tensors' fingerprints as generated (made afresh, not read
  // from the copy a lane may have written into).
  [[nodiscard]] std::vector<InputFingerprint> generated_host_fingerprints() const;
  // Generates the host copy again into the same buffers (implementations
  // hold views of them): what a lane that wrote into them changed is undone.
  void restore_host();

  // The device copy is owned here but typed in kernels/ (device_inputs.hpp),
  // so this library stays free of CUDA types.
  [[nodiscard]] const std::shared_ptr<void> &device_slot() const { return device_; }
  void set_device_slot(std::shared_ptr<void> device) { device_ = std::move(device); }
  void release_device() { device_.reset(); }

private:
  const Workload &workload_;
  int variant_ = 0;
  std::unique_ptr<Workload> variant_workload_;
  std::unique_ptr<HostInputs> host_;
  std::shared_ptr<void> device_;
};

} // namespace kibench
