// `fused-fp8-teacher` on the GPU. Three layers, each against the host:
//  1. the row quantization kernel (e4m3_quantize.hpp) bit for bit against
//     e4m3_scaling.hpp: codes, scales, padding, ties, subnormals, a row of
//     zeros, both the vectorized and the element-wise path;
//  2. the FP8 teacher GEMM (fp8_teacher.hpp) against fp64 on the
//     dequantized operands, to bf16 rounding plus the FP8 tensor cores'
//     accumulation, with rows of very different scales;
//  3. the whole implementation against the fp64 oracle computed on the
//     *dequantized* teacher inputs (x_t and W_t rounded through e4m3 with
//     the same per-row scales, on the host), to `fused`'s own bounds
//     (gradients 2e-3 relative L2, the loss 1e-5 relative): that verifies
//     the implementation exactly, whatever FP8 costs against the
//     unquantized inputs. That cost, against the ordinary oracle, is
//     printed per case (dev/fp8/ measures it at the seed's size). Each
//     case runs twice: with cuBLASLt's fast FP8 accumulation (the
//     registered lane, FusedOptions::fp8_fast_accumulation) and with its
//     accurate one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/e4m3.hpp"
#include "kernels/lm_head/fused/e4m3_quantize.hpp"
#include "kernels/lm_head/fused/e4m3_scaling.hpp"
#include "kernels/lm_head/fused/fp8_teacher.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/common/device_compare.hpp"
#include "kernels/registry.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/inputs/bf16.hpp"
#include "lib/inputs/input_set.hpp"
#include "test/test_gpu_checks.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using namespace kibench::test;

namespace {

using bf16_t = __nv_bfloat16;

constexpr double kGradientBound = 2e-3;
constexpr double kLossBound = 1e-5;

template <class T> std::vector<T> to_host(const gpu::DeviceBuffer<T> &buffer) {
  std::vector<T> host(buffer.size());
  CUDA_CHECK(cudaMemcpy(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

template <class T, class U>
gpu::DeviceBuffer<T> to_device(gpu::DeviceAllocator &allocator, const std::vector<U> &host) {
  static_assert(sizeof(T) == sizeof(U));
  gpu::DeviceBuffer<T> buffer(allocator, host.size());
  CUDA_CHECK(cudaMemcpy(buffer.data(), host.data(), buffer.bytes(), cudaMemcpyHostToDevice));
  return buffer;
}

// A [rows, cols] bf16 matrix whose row 0 has amax 448 (scale exactly 1)
// and holds e4m3's ties and subnormals as they are; row 2 is zeros; the
// other rows are smooth values over several binades, some negative.
std::vector<std::uint16_t> quantization_probe(std::int64_t rows, std::int64_t cols) {
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * cols));
  const float ties[] = {448.0f,   1.0625f,      1.1875f,   -1.0625f, 432.0f,   15 * 0x1p-10f, 13 * 0x1p-10f,
                        0x1p-10f, 3 * 0x1p-10f, 0x1.1p-6f, 0x1p-12f, -0x1p-9f, 240.0f,        0.0f};
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      float v = 0.0f;
      if (r == 0) {
        v = ties[c % std::size(ties)];
      } else if (r != 2) {
        v = static_cast<float>(std::sin(0.11 * static_cast<double>(r * cols + c) + static_cast<double>(r)) *
                               std::ldexp(1.0, static_cast<int>(c % 9) - 4 - static_cast<int>(r % 5)));
      }
      bits[static_cast<std::size_t>(r * cols + c)] = bf16::from_float(v);
    }
  return bits;
}

void check_quantization(std::int64_t rows, std::int64_t cols, std::int64_t padded_rows) {
  const std::int64_t ld = gpu::fused::fp8_padded(cols);
  INFO(fmt::format("rows {} (padded {}), cols {} (codes ld {})", rows, padded_rows, cols, ld));
  const std::vector<std::uint16_t> bits = quantization_probe(rows, cols);
  const e4m3::ScaledMatrix host = e4m3::quantize(bits, rows, cols, {1, 0});
  gpu::DeviceAllocator allocator("test-e4m3");
  const auto input = to_device<bf16_t>(allocator, bits);
  gpu::DeviceBuffer<std::uint8_t> codes(allocator, static_cast<std::size_t>(padded_rows * ld));
  gpu::DeviceBuffer<float> scales(allocator, static_cast<std::size_t>(padded_rows));
  CUDA_CHECK(cudaMemset(codes.data(), 0xAB, codes.bytes())); // padding must be written, not left
  CUDA_CHECK(cudaMemset(scales.data(), 0xFF, scales.bytes()));
  gpu::fused::quantize_rows_e4m3({.input = input.data(),
                                  .rows = rows,
                                  .cols = cols,
                                  .ld_input = cols,
                                  .codes = codes.data(),
                                  .ld_codes = ld,
                                  .padded_rows = padded_rows,
                                  .scales = scales.data()},
                                 nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint8_t> device_codes = to_host(codes);
  const std::vector<float> device_scales = to_host(scales);
  int wrong_codes = 0, wrong_scales = 0, wrong_padding = 0;
  for (std::int64_t r = 0; r < padded_rows; ++r) {
    const float scale = device_scales[static_cast<std::size_t>(r)];
    if (r < rows ? scale != host.scale_at(r, 0) : scale != 1.0f) ++wrong_scales;
    for (std::int64_t c = 0; c < ld; ++c) {
      const std::uint8_t code = device_codes[static_cast<std::size_t>(r * ld + c)];
      if (r >= rows || c >= cols) {
        if (code != 0) ++wrong_padding;
      } else if (code != host.codes[static_cast<std::size_t>(r * cols + c)]) {
        if (wrong_codes++ < 8)
          UNSCOPED_INFO(fmt::format("[{}, {}]: device {:#04x}, host {:#04x}, x = {}", r, c, code,
                                    host.codes[static_cast<std::size_t>(r * cols + c)],
                                    bf16::to_float(bits[static_cast<std::size_t>(r * cols + c)])));
      }
    }
  }
  CHECK(wrong_codes == 0);
  CHECK(wrong_scales == 0);
  CHECK(wrong_padding == 0);
  CHECK(host.scale_at(0, 0) == 1.0f); // row 0 really holds the ties unscaled
  CHECK(host.scale_at(2, 0) == 1.0f); // the row of zeros
}

// The case as GpuCase draws it, with the chunk rows forced.
struct Fp8Case {
  test::GpuCase shape;
  std::int64_t chunk_rows = 0;
  double loss_bound = kLossBound;
};

// out against ref within `bound` (exactly zero where ref is); returns the relative L2 error.
double check_gradient(const char *name, const TensorRef &out, const std::vector<double> &ref, double bound) {
  return test::check_device_gradient(name, out, ref, bound).rel_l2_error;
}

// prepare, poison, run, and compare with the oracle of the dequantized
// teacher (to `fused`'s bounds) and with the ordinary one (printed);
// `fast_accumulation`: the teacher GEMM with cuBLASLt's fast accumulation
// (FusedOptions::fp8_fast_accumulation).
void check_fp8_case(const Fp8Case &c, Pass pass, bool fast_accumulation = false) {
  const test::GpuCase &s = c.shape;
  INFO(fmt::format("case {}: T={} V={} H={} beta={} tau={} ignored={} bias={} chunk rows={}, {}{}", s.name,
                   s.tokens, s.vocab, s.hidden, s.beta, s.temperature, s.ignore_fraction, s.bias,
                   c.chunk_rows, pass == Pass::forward ? "forward" : "full",
                   fast_accumulation ? ", fast accumulation" : ""));
  const Workload w = test::make_gpu_workload(s);
  InputSet inputs(w);
  auto impl = make_fused(FusedOptions{.name = "fused-fp8-teacher",
                                      .logit_statistics = LogitStatistics::off,
                                      .plan = {.chunk_rows = c.chunk_rows, .gemm_candidates = 1},
                                      .teacher_precision = TeacherPrecision::fp8_e4m3,
                                      .fp8_fast_accumulation = fast_accumulation});
  const auto why_not = impl->unsupported(w);
  INFO(why_not.value_or("supported"));
  REQUIRE_FALSE(why_not.has_value());
  impl->prepare(w, inputs);
  impl->poison_outputs();
  impl->run(pass);
  const OutputView out = impl->outputs();

  // What was run: labels, and the workspace the plan counts (the e4m3
  // copies included), while the inputs are alive.
  const json::Object labels = impl->run_labels();
  CHECK(labels.find("logit_gemm")->as_string().starts_with("cuBLASLt: z_s bf16, z_t FP8 e4m3"));
  const std::int64_t rows = std::stoll(labels.find("chunk_rows")->as_string());
  const gpu::fused::ChunkShape shape{.tokens = s.tokens,
                                     .vocab = s.vocab,
                                     .student_hidden = s.hidden / 2,
                                     .student_bias = s.bias,
                                     .sort_temp_bytes = gpu::fused::target_sort_temp_bytes(s.tokens, s.vocab),
                                     .direct_grad_weight = true,
                                     .logit_statistics = false,
                                     .fp8_teacher_hidden = s.hidden,
                                     .fp8_teacher_bias = s.bias};
  CHECK(impl->memory().workspace_bytes == gpu::fused::workspace_bytes(shape, rows));

  const HostInputs &host = inputs.host();
  const OracleProblem exact = oracle_problem(w, host);
  OracleProblem dequantized = exact;
  dequantized.teacher_input =
      e4m3::dequantize(e4m3::quantize(host.teacher_input, s.tokens, s.hidden, {1, 0}));
  dequantized.teacher_weight =
      e4m3::dequantize(e4m3::quantize(host.teacher_weight, s.vocab, s.hidden, {1, 0}));
  const bool gradients = pass != Pass::forward;
  const OracleResult ref = run_oracle(dequantized, gradients);
  const OracleResult plain = run_oracle(exact, gradients);

  INFO(fmt::format("loss {:.12g}, oracle of the dequantized teacher {:.12g}, of the bf16 teacher {:.12g}",
                   out.loss, ref.loss, plain.loss));
  CHECK(std::isfinite(out.loss));
  CHECK(relative_error(out.loss, ref.loss) <= c.loss_bound);
  std::string against_plain = fmt::format("loss {:.2e}", relative_error(out.loss, plain.loss));
  if (gradients) {
    check_gradient("grad_student_input", out.grad_student_input, ref.gradients.student_input, kGradientBound);
    check_gradient("grad_student_weight", out.grad_student_weight, ref.gradients.student_weight,
                   kGradientBound);
    against_plain += fmt::format(
        ", grad x_s {:.2e}, grad W_s {:.2e}",
        check_gradient("grad_student_input", out.grad_student_input, plain.gradients.student_input, 0.0),
        check_gradient("grad_student_weight", out.grad_student_weight, plain.gradients.student_weight, 0.0));
    if (s.bias) {
      check_gradient("grad_student_bias", out.grad_student_bias, ref.gradients.student_bias, kGradientBound);
      against_plain +=
          fmt::format(", grad b_s {:.2e}", check_gradient("grad_student_bias", out.grad_student_bias,
                                                          plain.gradients.student_bias, 0.0));
    } else {
      CHECK(out.grad_student_bias.empty());
    }
  } else {
    CHECK(out.grad_student_input.empty());
  }
  std::printf(
      "fused-fp8-teacher%s %s (%s): relative error against the oracle of the unquantized inputs: %s\n",
      fast_accumulation ? " (fast accumulation)" : "", s.name.c_str(),
      pass == Pass::forward ? "forward" : "full", against_plain.c_str());
}

} // namespace

TEST_CASE("fp8 teacher: the row quantization kernel matches the host bit for bit", "[gpu][fp8]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  check_quantization(6, 64, 6);   // 16-byte vectors, no padding
  check_quantization(7, 37, 16);  // element by element, columns to 48, rows to 16
  check_quantization(5, 4096, 9); // the seed's H
  check_quantization(3, 14, 3);   // the ties row alone once, padded to 16 columns
}

TEST_CASE("fp8 teacher: the FP8 GEMM is s_x s_w times the e4m3 product, rounded to bf16", "[gpu][fp8]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  // V = 1001 pads to 1008 rows and H = 70 to 80 columns; a bias; 5 rows,
  // then 1 row through the same buffers. Every row of x and of W has its
  // own power-of-two magnitude (2^-6 to 2^6), and one row of each is zeros
  // (scale 1), so a scale applied to the wrong row or column, or the two
  // vectors swapped, is off by a factor of 2 or more, far outside the
  // tolerance.
  const std::int64_t V = 1001, H = 70, ld = gpu::fused::logits_stride(V), R = 5;
  const std::int64_t zero_input_row = 3, zero_weight_row = 500;
  std::vector<std::uint16_t> weight(static_cast<std::size_t>(V * H)), input(static_cast<std::size_t>(R * H)),
      bias(static_cast<std::size_t>(V));
  for (std::int64_t v = 0; v < V; ++v)
    for (std::int64_t k = 0; k < H; ++k) {
      const auto i = static_cast<double>(v * H + k);
      const double magnitude = v == zero_weight_row ? 0.0 : std::ldexp(0.05, static_cast<int>(v % 13) - 6);
      weight[static_cast<std::size_t>(v * H + k)] =
          bf16::from_float(static_cast<float>(magnitude * std::sin(0.7 * i)));
    }
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t k = 0; k < H; ++k) {
      const auto i = static_cast<double>(r * H + k);
      const double magnitude = r == zero_input_row ? 0.0 : std::ldexp(1.0, 3 * static_cast<int>(r) - 6);
      input[static_cast<std::size_t>(r * H + k)] =
          bf16::from_float(static_cast<float>(magnitude * (0.5 + 0.5 * std::cos(1.3 * i))));
    }
  for (std::size_t i = 0; i < bias.size(); ++i)
    bias[i] = bf16::from_float(static_cast<float>(0.1 * std::sin(static_cast<double>(i))));
  const e4m3::ScaledMatrix w8 = e4m3::quantize(weight, V, H, {1, 0});
  const e4m3::ScaledMatrix x8 = e4m3::quantize(input, R, H, {1, 0});
  REQUIRE(w8.scale_at(zero_weight_row, 0) == 1.0f);
  REQUIRE(x8.scale_at(zero_input_row, 0) == 1.0f);
  // Rows 0 and 4 reach their magnitudes (the largest element rounds to it
  // in bf16), so their scales differ by exactly 2^12.
  REQUIRE(x8.scale_at(4, 0) == 4096 * x8.scale_at(0, 0));

  gpu::DeviceAllocator allocator("test-fp8-gemm");
  const auto weight_d = to_device<bf16_t>(allocator, weight);
  const auto input_d = to_device<bf16_t>(allocator, input);
  const auto bias_d = to_device<bf16_t>(allocator, bias);
  gpu::DeviceBuffer<bf16_t> z(allocator, static_cast<std::size_t>(R * ld));
  gpu::CublasLt blas(allocator, gpu::fused::kCublasWorkspaceBytes);
  gpu::Stream stream;
  gpu::fused::Fp8TeacherLogits teacher(allocator, V, H, weight_d.data(), bias_d.data(), R, stream);
  for (const std::int64_t rows : {R, std::int64_t{1}}) {
    INFO("rows " << rows);
    CUDA_CHECK(cudaMemsetAsync(z.data(), 0xFF, z.bytes(), stream)); // NaN where nothing is written
    teacher.enqueue(blas, input_d.data(), rows, z.data(), ld, stream);
    stream.synchronize();
    const std::vector<bf16_t> got = to_host(z);
    int bad = 0;
    // The accumulation's error, for the record: the largest |z - ref| as a
    // fraction of the terms' magnitudes, and the mean signed error as a
    // fraction of them (a systematic bias would show there).
    double worst = 0.0, signed_sum = 0.0;
    std::int64_t counted = 0;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t v = 0; v < gpu::fused::fp8_padded(V); ++v) {
        const float out = __bfloat162float(got[static_cast<std::size_t>(i * ld + v)]);
        if (v >= V) { // padding columns: zero weight rows and bias
          if (out != 0.0f) ++bad;
          continue;
        }
        double dot = 0.0, magnitude = 0.0;
        for (std::int64_t k = 0; k < H; ++k) {
          const double term = x8.value_at(i, k) * w8.value_at(v, k);
          dot += term;
          magnitude += std::abs(term);
        }
        const double ref = dot + bf16::to_double(bias[static_cast<std::size_t>(v)]);
        // bf16's rounding of the result (half an ulp is 2^-9 relative),
        // and the accumulation: Hopper's FP8 tensor cores add products in
        // a narrower accumulator (about 14 significant bits) between
        // cuBLASLt's promotions to fp32 (its accurate mode, not fast
        // accumulation), a few 2^-14 of the terms' magnitudes; 2^-10 of
        // it leaves room and still catches any misplaced scale.
        const double tolerance = std::abs(ref) * 0x1p-8 + magnitude * 0x1p-10 + 1e-30;
        const double error = static_cast<double>(out) - ref;
        if (!(std::abs(error) <= tolerance) && bad++ < 8)
          UNSCOPED_INFO(
              fmt::format("z[{}, {}] = {}, expected {} (tolerance {:.2e})", i, v, out, ref, tolerance));
        if (magnitude > 0.0) {
          worst = std::max(worst, std::abs(error) / magnitude);
          signed_sum += error / magnitude;
          ++counted;
        }
      }
    CHECK(bad == 0);
    std::printf("fp8 teacher GEMM, %lld rows: error / sum of |terms|: max %.2e, mean %+.2e (bf16 output "
                "rounding included)\n",
                static_cast<long long>(rows), worst,
                counted > 0 ? signed_sum / static_cast<double>(counted) : 0.0);
  }
}

TEST_CASE("fp8 teacher: cuBLASLt FP8 GEMMs outside Hopper's TN form and 16-byte rows are refused",
          "[gpu][fp8]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  gpu::DeviceAllocator allocator("test-fp8-refusals");
  gpu::DeviceBuffer<std::uint8_t> a(allocator, 64 * 64), b(allocator, 64 * 64);
  gpu::DeviceBuffer<float> scales(allocator, 64);
  gpu::DeviceBuffer<bf16_t> c(allocator, 64 * 64), bias(allocator, 64);
  gpu::CublasLt blas(allocator, gpu::fused::kCublasWorkspaceBytes);
  const auto good = [&] {
    gpu::RowMajorGemm g = gpu::gemm_abt(32, 64, 64, a.data(), b.data(), c.data());
    g.fp8 = {.a = scales.data(), .b = scales.data()};
    return g;
  };
  {
    gpu::RowMajorGemm g = good();
    blas.matmul(g, nullptr); // the form that runs
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<std::pair<const char *, gpu::RowMajorGemm>> bad;
  bad.emplace_back("one scale vector", good());
  bad.back().second.fp8.b = nullptr;
  bad.emplace_back("B not K-major", good());
  bad.back().second.transpose_b = false;
  bad.emplace_back("k = 40", good());
  bad.back().second.k = 40;
  bad.emplace_back("lda = 72", good());
  bad.back().second.lda = 72;
  bad.emplace_back("n = 60 (120-byte rows of C)", good());
  bad.back().second.n = 60;
  bad.emplace_back("fp32 C with a bias", good());
  bad.back().second.output_type = ElementType::fp32;
  bad.back().second.bias = bias.data();
  for (const auto &[why, g] : bad) {
    INFO(why);
    CHECK_THROWS_AS(blas.matmul(g, nullptr), std::invalid_argument);
  }
  CHECK_THROWS_AS(gpu::matmul_aligned(blas, good(), nullptr), std::invalid_argument);
}

TEST_CASE("fused-fp8-teacher: against the oracle of the dequantized teacher, odd shapes",
          "[gpu][fused][fp8]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  // V not a multiple of 8 (padded to 16), odd H (70: Hs = 35, pads to 80),
  // ragged chunks (the last one short), every divergence, tau != 1,
  // ignored tokens, biases, a single token, one direct chunk.
  const std::vector<Fp8Case> cases = {
      {.shape = {.name = "fp8-beta0.5", .tokens = 56, .vocab = 3001, .hidden = 128, .seed = 61},
       .chunk_rows = 24},
      {.shape = {.name = "fp8-beta0", .tokens = 40, .vocab = 1001, .hidden = 70, .beta = 0.0, .seed = 62},
       .chunk_rows = 9},
      {.shape = {.name = "fp8-beta1-tau2",
                 .tokens = 33,
                 .vocab = 2049,
                 .hidden = 96,
                 .beta = 1.0,
                 .temperature = 2.0,
                 .seed = 63},
       .chunk_rows = 16},
      {.shape = {.name = "fp8-tau0.5-ignore25-bias",
                 .tokens = 48,
                 .vocab = 1000,
                 .hidden = 64,
                 .temperature = 0.5,
                 .ignore_fraction = 0.25,
                 .bias = true,
                 .seed = 64},
       .chunk_rows = 7},
      {.shape = {.name = "fp8-t1", .tokens = 1, .vocab = 50257, .hidden = 64, .seed = 65}, .chunk_rows = 0},
      {.shape = {.name = "fp8-direct", .tokens = 24, .vocab = 4096, .hidden = 256, .bias = true, .seed = 66},
       .chunk_rows = 0},
  };
  for (const Fp8Case &c : cases) {
    for (const bool fast_accumulation : {false, true}) {
      check_fp8_case(c, Pass::full, fast_accumulation);
      check_fp8_case(c, Pass::forward, fast_accumulation);
    }
  }
}

TEST_CASE("fused-fp8-teacher: through the registry, all targets ignored gives loss 0", "[gpu][fused][fp8]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const RegisteredImplementation *r = find_implementation("fused-fp8-teacher");
  REQUIRE(r != nullptr);
  const Workload w = test::make_gpu_workload({.name = "fp8-ignore100",
                                              .tokens = 32,
                                              .vocab = 2000,
                                              .hidden = 128,
                                              .ignore_fraction = 1.0,
                                              .seed = 67});
  InputSet inputs(w);
  auto impl = r->make();
  REQUIRE_FALSE(impl->unsupported(w).has_value());
  impl->prepare(w, inputs);
  impl->poison_outputs();
  impl->run(Pass::full);
  const OutputView out = impl->outputs();
  CHECK(out.loss == 0.0);
  for (const TensorRef *g : {&out.grad_student_input, &out.grad_student_weight}) {
    const std::vector<double> zeros(static_cast<std::size_t>(g->count), 0.0);
    const ErrorStats e = gpu::compare_device("gradient", *g, host_view(zeros));
    CHECK(e.nonfinite == 0);
    CHECK(e.max_abs_error == 0.0);
  }
  // Tuned (the registry's 16 candidates) like every lane: the FP8 GEMM's
  // shape is among the tuning records.
  bool fp8_shape = false;
  for (const auto &[key, value] : impl->run_labels())
    if (value.is_string() && value.as_string().find("e4m3->bf16") != std::string::npos) fp8_shape = true;
  CHECK(fp8_shape);
}
