// The teacher logit GEMM of `fused-fp8-teacher`, z_t = x_t W_tᵀ (+ b_t), in
// FP8 e4m3 on cuBLASLt with outer-vector scaling (cublaslt.hpp, Fp8Scales):
//   prepare (untimed; the teacher is frozen, as a served FP8 checkpoint is):
//     s_w[v] = amax(W_t[v, :]) / 448,  Q_w[v, k] = e4m3(W_t[v, k] / s_w[v])
//   every chunk of token rows, inside the timed pass:
//     s_x[i] = amax(x_t[i, :]) / 448,  Q_x[i, k] = e4m3(x_t[i, k] / s_x[i])
//     z_t[i, v] = bf16(s_x[i] · s_w[v] · Σ_k Q_x[i, k] Q_w[v, k] + b_t[v])
// with fp32 accumulation (e4m3_scaling.hpp and e4m3_quantize.hpp have the
// rounding; a row of zeros gets scale 1). Hopper's FP8 kernels need both
// operands K-major (x_t [R, H] and W_t [V, H] already are) in whole 16-byte
// rows, so the e4m3 copies are padded with zeros: H to H16 (a multiple of
// 16), V to V16 rows of scale 1. The GEMM then has n = V16 columns, which
// the logit buffer's row stride (V rounded up to 64) holds: columns
// [V, V16) come out 0, the others as the bf16 path writes them. Any H and
// V run this way; no shape is refused for the FP8 GEMM's sake.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace kibench::gpu::fused {

// An extent padded to whole 16-byte rows of e4m3 codes.
constexpr std::int64_t fp8_padded(std::int64_t extent) {
  return (extent + 15) / 16 * 16;
}

// Why the FP8 teacher GEMM cannot run on a GPU of compute capability
// major.minor, or nullopt where it can. cuBLASLt documents its outer-vector
// scaling (one fp32 scale per row of A and per column of B,
// CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, since cuBLAS 12.9) for
// compute capability 9.0 only: Ada (8.9) scales FP8 operands per tensor,
// Blackwell (10.0 and later) by blocks, and there the heuristic would find
// no algorithm when the workload is prepared.
[[nodiscard]] std::optional<std::string> fp8_teacher_unsupported(int major, int minor);

class Fp8TeacherLogits {
public:
  // Allocates from `allocator` what chunk_plan.hpp counts for an FP8
  // teacher (fp8_teacher_weight_bytes, and R = `chunk_rows` rows of x_t
  // codes and scales) and enqueues W_t's e4m3 copy and the padded bias on
  // `stream`. `weight` is W_t [vocab, hidden], `bias` b_t [vocab] or null.
  // `fast_accumulation`: the GEMM with cuBLASLt's fast accumulation
  // (Fp8Scales::fast_accumulation).
  Fp8TeacherLogits(DeviceAllocator &allocator, std::int64_t vocab, std::int64_t hidden,
                   const __nv_bfloat16 *weight, const __nv_bfloat16 *bias, std::int64_t chunk_rows,
                   cudaStream_t stream, bool fast_accumulation = false);

  // Enqueues z [rows, ld] = the chunk's teacher logits from x [rows, hidden]
  // (rows <= chunk_rows, ld >= fp8_padded(vocab) and a multiple of 8):
  // quantizes x's rows, then the FP8 GEMM through `blas`.
  void enqueue(CublasLt &blas, const __nv_bfloat16 *x, std::int64_t rows, __nv_bfloat16 *z, std::int64_t ld,
               cudaStream_t stream);

private:
  std::int64_t vocab_ = 0, hidden_ = 0, chunk_rows_ = 0;
  bool fast_accumulation_ = false;
  DeviceBuffer<std::uint8_t> weight_codes_; // [V16, H16]
  DeviceBuffer<float> weight_scales_;       // [V16]
  DeviceBuffer<__nv_bfloat16> bias_;        // [V16], zeros past V; empty without bias
  DeviceBuffer<std::uint8_t> input_codes_;  // [R, H16]
  DeviceBuffer<float> input_scales_;        // [R]
};

} // namespace kibench::gpu::fused
