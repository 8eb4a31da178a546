// The workload's inputs on the GPU: bf16 x_s, W_s, x_t, W_t (and biases)
// and int64 targets, generated on the device by the Philox element mapping
// of lib/inputs/philox.hpp, bit-identical to the CPU generator. Every GPU
// implementation in a run shares one copy, owned by the InputSet's device
// slot and counted as input bytes. (No JSON headers here: CUDA sources may
// include this.)
#pragma once

#include <cstdint>
#include <memory>

#include <cuda_bf16.h>

#include "kernels/cuda/device_buffer.hpp"

namespace kibench {
class InputSet;
struct Workload;
} // namespace kibench

namespace kibench::gpu {

struct DeviceInputs {
  // First member: the buffers below are returned to it before it goes.
  DeviceAllocator allocator{"inputs"};

  std::int64_t tokens = 0;         // T
  std::int64_t vocab = 0;          // V
  std::int64_t hidden = 0;         // H
  std::int64_t student_hidden = 0; // Hs
  std::int64_t ignore_index = -100;

  DeviceBuffer<__nv_bfloat16> student_input;  // x_s [T, Hs]
  DeviceBuffer<__nv_bfloat16> student_weight; // W_s [V, Hs]
  DeviceBuffer<__nv_bfloat16> teacher_input;  // x_t [T, H]
  DeviceBuffer<__nv_bfloat16> teacher_weight; // W_t [V, H]
  DeviceBuffer<__nv_bfloat16> student_bias;   // b_s [V], empty without bias
  DeviceBuffer<__nv_bfloat16> teacher_bias;   // b_t [V], empty without bias
  DeviceBuffer<std::int64_t> target;          // y [T], ignore_index where ignored
  // jsd's inputs (the five above then empty but for the target): fp32 [T, V]
  // log-probabilities, generated on the host (lib/inputs/generate.hpp) and
  // copied, so they are the CPU's bit for bit.
  DeviceBuffer<float> student_log_probs; // X = log q
  DeviceBuffer<float> teacher_log_probs; // Y = log p

  // Σ_i (y_i ≠ ignore_index), counted on the device at generation (for
  // tests and sizing; implementations compute N themselves, as PyTorch does).
  std::int64_t valid_tokens = 0;

  [[nodiscard]] bool has_student_bias() const { return !student_bias.empty(); }
  [[nodiscard]] bool has_teacher_bias() const { return !teacher_bias.empty(); }
  [[nodiscard]] std::uint64_t bytes() const { return allocator.live_bytes(); }
};

// The InputSet's device copy, generated (and synchronized) on first use.
DeviceInputs &device_inputs(InputSet &inputs);

// A fresh device copy, not cached anywhere.
std::shared_ptr<DeviceInputs> generate_device_inputs(const Workload &workload);
// Generates `workload`'s inputs into `inputs`' buffers as they are
// (allocated for that workload): what generate_device_inputs fills, and
// what restores a copy a lane wrote into (implementations keep pointers to
// these buffers).
void fill_device_inputs(DeviceInputs &inputs, const Workload &workload);

} // namespace kibench::gpu
