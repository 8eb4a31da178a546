// GEMMs whose contiguous extents are no multiple of 8, cut so that cuBLASLt
// runs its fast kernels on almost all of the work.
//
// cuBLASLt's Hopper kernels want every contiguous extent (the columns of a
// row-major operand) in whole 16-byte vectors; a vocabulary like GPT-2's
// 50257 drops every GEMM that has V as such an extent to kernels 2-6x
// slower. Measured on the H200 (tuned, median of 7): z = x Wᵀ, 8192 x V x
// 2048, 15.6 ms at V = 50257 against 2.48 ms at V = 50264; grad x = G W,
// 8192 x 2048 x V, 12.8 against 2.27 ms; grad W's high half, V/2 x 2048 x
// 8192, 1.92 against 1.16 ms.
//
// matmul_aligned cuts each such extent e at e8 = e - e mod 8: the GEMM over
// [0, e8) has aligned operands (offsets of e8 elements keep 16-byte
// alignment) and runs at the full rate; the 1-7 left over run as a thin
// GEMM of negligible work. Which extents are contiguous, for
// C[m, n] = op(A)[m, k] · op(B)[k, n] row-major:
//   n  columns of C, and of B when B is stored [k, n]
//   m  columns of A when A is stored transposed, [k, m]
//   k  columns of A stored [m, k], and of B stored transposed, [n, k]
// Cuts along m or n partition C and change nothing in any element's sum.
// A cut along k sums C = A₁B₁ + A₂B₂ in two GEMMs, the second with beta = 1:
// exact in an fp32 or fp64 C, one extra rounding in a bf16 one.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/cublaslt.hpp"

namespace kibench::gpu {

// Enqueues `gemm` on `stream`, cut as above where an extent needs it (at
// most 8 GEMMs, one when none does). A cut along k needs host alpha and
// beta, and FP8 GEMMs are never cut (std::invalid_argument otherwise):
// their owners pad them (fp8_teacher.hpp).
void matmul_aligned(CublasLt &blas, const RowMajorGemm &gemm, cudaStream_t stream);

// The smallest multiple of 8 that is at least `extent`: a row stride that
// keeps every row of a bf16 or fp32 matrix 16-byte aligned.
constexpr std::int64_t aligned_stride(std::int64_t extent) {
  return (extent + 7) / 8 * 8;
}

} // namespace kibench::gpu
