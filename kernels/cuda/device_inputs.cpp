#include "kernels/cuda/device_inputs.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/philox_fill.hpp"
#include "kernels/cuda/stream.hpp"
#include "lib/inputs/generate.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::gpu {

namespace {

void fill(DeviceBuffer<__nv_bfloat16> &buffer, const GeneratorSpec &spec, cudaStream_t stream) {
  if (buffer.empty()) return; // jsd has no LM-head tensors
  if (spec.name != "philox4x32_10_uniform")
    throw std::invalid_argument(fmt::format("generator '{}' cannot fill a float tensor", spec.name));
  fill_uniform_bf16(buffer.data(), static_cast<std::int64_t>(buffer.size()), spec.seed, spec.low, spec.high,
                    stream);
}

} // namespace

std::shared_ptr<DeviceInputs> generate_device_inputs(const Workload &w) {
  if (w.target.name != "philox4x32_10_uniform_int")
    throw std::invalid_argument(fmt::format("generator '{}' cannot fill the targets", w.target.name));
  auto inputs = std::make_shared<DeviceInputs>();
  DeviceInputs &d = *inputs;
  d.tokens = w.tokens;
  d.vocab = w.vocab;
  d.hidden = w.hidden;
  d.student_hidden = w.student_hidden;
  d.ignore_index = w.scalars.ignore_index;
  const auto n = [](std::int64_t a, std::int64_t b = 1) { return static_cast<std::size_t>(a * b); };
  using Bf16Buffer = DeviceBuffer<__nv_bfloat16>;
  d.student_input = Bf16Buffer(d.allocator, n(w.tokens, w.student_hidden), MemoryTag::input);
  d.student_weight = Bf16Buffer(d.allocator, n(w.vocab, w.student_hidden), MemoryTag::input);
  d.teacher_input = Bf16Buffer(d.allocator, n(w.tokens, w.hidden), MemoryTag::input);
  d.teacher_weight = Bf16Buffer(d.allocator, n(w.vocab, w.hidden), MemoryTag::input);
  if (w.student_bias) d.student_bias = Bf16Buffer(d.allocator, n(w.vocab), MemoryTag::input);
  if (w.teacher_bias) d.teacher_bias = Bf16Buffer(d.allocator, n(w.vocab), MemoryTag::input);
  d.target = DeviceBuffer<std::int64_t>(d.allocator, n(w.tokens), MemoryTag::input);
  if (!w.operation_kind->has_lm_heads()) {
    d.student_log_probs = DeviceBuffer<float>(d.allocator, n(w.tokens, w.vocab), MemoryTag::input);
    d.teacher_log_probs = DeviceBuffer<float>(d.allocator, n(w.tokens, w.vocab), MemoryTag::input);
  }
  fill_device_inputs(d, w);
  return inputs;
}

void fill_device_inputs(DeviceInputs &d, const Workload &w) {
  const auto n = [](std::int64_t a, std::int64_t b = 1) { return static_cast<std::size_t>(a * b); };
  Stream stream;
  if (!w.operation_kind->has_lm_heads()) {
    // Row-wise log_softmax in double on the host's cores, then one copy each.
    for (const auto &[spec, buffer] : {std::pair{&w.student_log_probs, &d.student_log_probs},
                                       std::pair{&w.teacher_log_probs, &d.teacher_log_probs}}) {
      if (spec->name != "philox4x32_10_uniform_log_softmax")
        throw std::invalid_argument(fmt::format("generator '{}' cannot fill log-probabilities", spec->name));
      std::vector<float> host(n(w.tokens, w.vocab));
      fill_log_softmax_rows(*spec, w.vocab, host);
      CUDA_CHECK(cudaMemcpy(buffer->data(), host.data(), buffer->bytes(), cudaMemcpyHostToDevice));
    }
  }
  fill(d.student_input, w.student_input, stream);
  fill(d.student_weight, w.student_weight, stream);
  fill(d.teacher_input, w.teacher_input, stream);
  fill(d.teacher_weight, w.teacher_weight, stream);
  if (w.student_bias) fill(d.student_bias, *w.student_bias, stream);
  if (w.teacher_bias) fill(d.teacher_bias, *w.teacher_bias, stream);

  DeviceBuffer<unsigned long long> valid(d.allocator, 1, MemoryTag::workspace);
  CUDA_CHECK(cudaMemsetAsync(valid.data(), 0, sizeof(unsigned long long), stream));
  fill_targets(d.target.data(), w.tokens, w.target.seed, static_cast<std::int64_t>(w.target.low),
               static_cast<std::int64_t>(w.target.high), w.target.ignore_fraction, w.scalars.ignore_index,
               valid.data(), stream);
  unsigned long long valid_host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&valid_host, valid.data(), sizeof(valid_host), cudaMemcpyDeviceToHost, stream));
  // The inputs are complete before any implementation's stream sees them.
  stream.synchronize();
  d.valid_tokens = static_cast<std::int64_t>(valid_host);
}

DeviceInputs &device_inputs(InputSet &inputs) {
  if (!inputs.device_slot()) inputs.set_device_slot(generate_device_inputs(inputs.generator_workload()));
  return *static_cast<DeviceInputs *>(inputs.device_slot().get());
}

} // namespace kibench::gpu
