// A bf16 matrix as e4m3 codes with one fp32 scale per block, on the host
// (e4m3.hpp has the rule: s = amax / 448 over the block, q = e4m3(x / s)).
// The block shapes of the FP8 recipes:
//   {1, cols}     one scale per row: cuBLASLt's outer-vector scaling
//                 (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F), what
//                 `fused-fp8-teacher` runs, per token row of x_t and per
//                 vocabulary row of W_t
//   {1, 128}      per 128-element run of a row (DeepSeek-V3's activations,
//                 cuBLASLt's VEC128_32F)
//   {128, 128}    per 128 x 128 tile (DeepSeek-V3's weights, BLK128x128_32F)
// Blocks at the right and bottom edges are as wide as what is left.
// The [gpu] tests check the device against this, and compute the oracle on
// its dequantized values; dev/fp8/ measures the error of each recipe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kibench::e4m3 {

struct BlockShape {
  std::int64_t rows = 1;
  std::int64_t cols = 0; // 0: the whole row
};

struct ScaledMatrix {
  std::int64_t rows = 0, cols = 0;
  BlockShape block;                // cols resolved (never 0)
  std::vector<std::uint8_t> codes; // [rows, cols]
  std::vector<float> scales;       // [ceil(rows / block.rows), ceil(cols / block.cols)]

  [[nodiscard]] std::int64_t scale_columns() const { return (cols + block.cols - 1) / block.cols; }
  [[nodiscard]] float scale_at(std::int64_t row, std::int64_t col) const {
    return scales[static_cast<std::size_t>((row / block.rows) * scale_columns() + col / block.cols)];
  }
  // s · q: exact in double (a 4-bit significand times a 24-bit one).
  [[nodiscard]] double value_at(std::int64_t row, std::int64_t col) const;
};

// `bits` holds a row-major [rows, cols] bf16 matrix. Throws
// std::invalid_argument for a size mismatch, an empty block or a
// nonfinite element (its block would have no scale).
[[nodiscard]] ScaledMatrix quantize(std::span<const std::uint16_t> bits, std::int64_t rows, std::int64_t cols,
                                    BlockShape block);

// Every element's value s · q, row-major [rows, cols].
[[nodiscard]] std::vector<double> dequantize(const ScaledMatrix &m);

} // namespace kibench::e4m3
