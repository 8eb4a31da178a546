#include "kernels/lm_head/fused/fp8_teacher.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/e4m3_quantize.hpp"

namespace kibench::gpu::fused {

namespace {

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

} // namespace

std::optional<std::string> fp8_teacher_unsupported(int major, int minor) {
  if (major == 9) return std::nullopt;
  return fmt::format("cuBLASLt scales FP8 e4m3 GEMMs per row (outer-vector scaling) on compute capability "
                     "9.0 (Hopper) only; this GPU is {}.{}",
                     major, minor);
}

Fp8TeacherLogits::Fp8TeacherLogits(DeviceAllocator &allocator, std::int64_t vocab, std::int64_t hidden,
                                   const __nv_bfloat16 *weight, const __nv_bfloat16 *bias,
                                   std::int64_t chunk_rows, cudaStream_t stream, bool fast_accumulation)
    : vocab_(vocab), hidden_(hidden), chunk_rows_(chunk_rows), fast_accumulation_(fast_accumulation) {
  if (vocab <= 0 || hidden <= 0 || chunk_rows <= 0 || weight == nullptr)
    throw std::invalid_argument(fmt::format("Fp8TeacherLogits: empty shape (V {}, H {}, {} rows a chunk)",
                                            vocab, hidden, chunk_rows));
  const std::int64_t V16 = fp8_padded(vocab), H16 = fp8_padded(hidden);
  weight_codes_ = DeviceBuffer<std::uint8_t>(allocator, count(V16 * H16));
  weight_scales_ = DeviceBuffer<float>(allocator, count(V16));
  input_codes_ = DeviceBuffer<std::uint8_t>(allocator, count(chunk_rows * H16));
  input_scales_ = DeviceBuffer<float>(allocator, count(chunk_rows));
  quantize_rows_e4m3({.input = weight,
                      .rows = vocab,
                      .cols = hidden,
                      .ld_input = hidden,
                      .codes = weight_codes_.data(),
                      .ld_codes = H16,
                      .padded_rows = V16,
                      .scales = weight_scales_.data()},
                     stream);
  if (bias != nullptr) {
    bias_ = DeviceBuffer<__nv_bfloat16>(allocator, count(V16));
    CUDA_CHECK(cudaMemsetAsync(bias_.data(), 0, bias_.bytes(), stream));
    CUDA_CHECK(cudaMemcpyAsync(bias_.data(), bias, count(vocab) * sizeof(__nv_bfloat16),
                               cudaMemcpyDeviceToDevice, stream));
  }
}

void Fp8TeacherLogits::enqueue(CublasLt &blas, const __nv_bfloat16 *x, std::int64_t rows, __nv_bfloat16 *z,
                               std::int64_t ld, cudaStream_t stream) {
  const std::int64_t V16 = fp8_padded(vocab_), H16 = fp8_padded(hidden_);
  if (rows <= 0 || rows > chunk_rows_ || ld < V16)
    throw std::invalid_argument(
        fmt::format("Fp8TeacherLogits: {} rows (at most {}) into a row stride {} (at least {})", rows,
                    chunk_rows_, ld, V16));
  quantize_rows_e4m3({.input = x,
                      .rows = rows,
                      .cols = hidden_,
                      .ld_input = hidden_,
                      .codes = input_codes_.data(),
                      .ld_codes = H16,
                      .padded_rows = rows,
                      .scales = input_scales_.data()},
                     stream);
  RowMajorGemm g = gemm_abt(rows, V16, H16, input_codes_.data(), weight_codes_.data(), z);
  g.ldc = ld;
  g.bias = bias_.empty() ? nullptr : bias_.data();
  g.fp8 = {.a = input_scales_.data(), .b = weight_scales_.data(), .fast_accumulation = fast_accumulation_};
  blas.matmul(g, stream);
}

} // namespace kibench::gpu::fused
