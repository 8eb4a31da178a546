// The GPU input generator against the CPU one, element by element: the
// device copy must be bit-identical (lib/inputs/philox.hpp), at odd sizes,
// over non-default ranges and ignore fractions.
#include <catch2/catch.hpp>

#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "lib/inputs/generate.hpp"
#include "lib/inputs/input_set.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

std::vector<std::uint16_t> to_host(const gpu::DeviceBuffer<__nv_bfloat16> &buffer) {
  std::vector<std::uint16_t> bits(buffer.size());
  CUDA_CHECK(cudaMemcpy(bits.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
  return bits;
}

// Counts elements whose bits differ from the CPU generator's.
std::int64_t mismatches(const gpu::DeviceBuffer<__nv_bfloat16> &buffer, const GeneratorSpec &spec) {
  const std::vector<std::uint16_t> bits = to_host(buffer);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) wrong += bits[i] != uniform_bf16_at(spec, i) ? 1 : 0;
  return wrong;
}

void check_inputs(const Workload &w) {
  InputSet inputs(w);
  const gpu::DeviceInputs &d = gpu::device_inputs(inputs);
  CHECK(d.student_input.size() == static_cast<std::size_t>(w.tokens * w.student_hidden));
  CHECK(mismatches(d.student_input, w.student_input) == 0);
  CHECK(mismatches(d.student_weight, w.student_weight) == 0);
  CHECK(mismatches(d.teacher_input, w.teacher_input) == 0);
  CHECK(mismatches(d.teacher_weight, w.teacher_weight) == 0);
  REQUIRE(d.has_student_bias() == w.student_bias.has_value());
  if (w.student_bias) CHECK(mismatches(d.student_bias, *w.student_bias) == 0);
  if (w.teacher_bias) CHECK(mismatches(d.teacher_bias, *w.teacher_bias) == 0);

  std::vector<std::int64_t> target(d.target.size());
  CUDA_CHECK(cudaMemcpy(target.data(), d.target.data(), d.target.bytes(), cudaMemcpyDeviceToHost));
  std::int64_t wrong = 0, valid = 0;
  for (std::size_t i = 0; i < target.size(); ++i) {
    const std::int64_t expected = target_at(w.target, w.scalars.ignore_index, i);
    wrong += target[i] != expected ? 1 : 0;
    valid += expected != w.scalars.ignore_index ? 1 : 0;
  }
  CHECK(wrong == 0);
  CHECK(d.valid_tokens == valid);

  // The InputSet keeps the copy: a second call generates nothing new.
  CHECK(&gpu::device_inputs(inputs) == &d);
}

} // namespace

TEST_CASE("device inputs are bit-identical to the CPU generator", "[gpu][inputs]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();

  SECTION("odd sizes, a quarter of the targets ignored") {
    // ~480k elements; no size a multiple of 4, so every Philox block edge
    // and tail is exercised.
    Workload w = test::make_gpu_workload({.name = "inputs-odd",
                                          .tokens = 50001,
                                          .vocab = 3001,
                                          .hidden = 6,
                                          .ignore_fraction = 0.25,
                                          .seed = 101});
    check_inputs(w);
  }
  SECTION("biases, shifted ranges, every target ignored") {
    Workload w = test::make_gpu_workload({.name = "inputs-bias",
                                          .tokens = 777,
                                          .vocab = 50257,
                                          .hidden = 10,
                                          .ignore_fraction = 1.0,
                                          .bias = true,
                                          .seed = 202});
    w.student_input = test::uniform_spec(7, -0.37, 0.81);
    w.teacher_weight = test::uniform_spec(8, -3.5, 2.25);
    w.target.low = 5;
    check_inputs(w);
  }
  SECTION("no target ignored, a large seed") {
    Workload w = test::make_gpu_workload(
        {.name = "inputs-seed", .tokens = 4099, .vocab = 1031, .hidden = 18, .seed = 0x0123456789ABCDEFull});
    check_inputs(w);
  }
}
