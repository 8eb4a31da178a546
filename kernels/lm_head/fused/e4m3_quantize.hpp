// The device side of e4m3_scaling.hpp's one-scale-per-row recipe, for the
// FP8 teacher logit GEMM (fp8_teacher.hpp): each row of a bf16 matrix to
// e4m3 codes with s = amax(row) / 448 (1 for a row of zeros), q = e4m3(x / s),
// the quotient rounded to fp32 and narrowed with round-to-nearest-even and
// saturation (cvt.rn.satfinite), bit for bit what e4m3.hpp computes on the
// host. The codes go into a buffer padded with zeros for cuBLASLt's FP8
// kernels: columns up to a row stride that is a multiple of 16 bytes, and
// optionally extra rows of zeros with scale 1.
// Plain types only: this header is included by host C++ and by nvcc.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kibench::gpu::fused {

struct RowQuantization {
  const __nv_bfloat16 *input = nullptr; // [rows, cols], row stride ld_input
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld_input = 0;
  std::uint8_t *codes = nullptr; // [padded_rows, ld_codes]: rows and columns past the input's are 0
  std::int64_t ld_codes = 0;     // >= cols, a multiple of 16
  std::int64_t padded_rows = 0;  // >= rows
  float *scales = nullptr;       // [padded_rows]: 1 past the input's rows
};

// Enqueues one block a row (amax, then the conversion, the row read twice,
// the second time from L1/L2) on `stream`; throws std::invalid_argument on a
// bad shape and the launch's error otherwise.
void quantize_rows_e4m3(const RowQuantization &q, cudaStream_t stream);

} // namespace kibench::gpu::fused
