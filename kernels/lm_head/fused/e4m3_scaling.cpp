#include "kernels/lm_head/fused/e4m3_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/lm_head/fused/e4m3.hpp"
#include "lib/inputs/bf16.hpp"

namespace kibench::e4m3 {

double ScaledMatrix::value_at(std::int64_t row, std::int64_t col) const {
  return static_cast<double>(scale_at(row, col)) *
         static_cast<double>(to_float(codes[static_cast<std::size_t>(row * cols + col)]));
}

ScaledMatrix quantize(std::span<const std::uint16_t> bits, std::int64_t rows, std::int64_t cols,
                      BlockShape block) {
  if (rows < 0 || cols < 0 || bits.size() != static_cast<std::size_t>(rows * cols))
    throw std::invalid_argument(
        fmt::format("e4m3::quantize: {} elements for a [{}, {}] matrix", bits.size(), rows, cols));
  if (block.cols == 0) block.cols = std::max<std::int64_t>(cols, 1);
  if (block.rows <= 0 || block.cols <= 0)
    throw std::invalid_argument(fmt::format("e4m3::quantize: empty block {} x {}", block.rows, block.cols));
  ScaledMatrix m{.rows = rows, .cols = cols, .block = block, .codes = {}, .scales = {}};
  m.codes.resize(bits.size());
  const std::int64_t block_rows = (rows + block.rows - 1) / block.rows;
  m.scales.assign(static_cast<std::size_t>(block_rows * m.scale_columns()), 1.0f);
  const auto at = [&](std::int64_t r, std::int64_t c) {
    return bf16::to_float(bits[static_cast<std::size_t>(r * cols + c)]);
  };
  for (std::int64_t br = 0; br < block_rows; ++br) {
    const std::int64_t r0 = br * block.rows, r1 = std::min(rows, r0 + block.rows);
    for (std::int64_t bc = 0; bc < m.scale_columns(); ++bc) {
      const std::int64_t c0 = bc * block.cols, c1 = std::min(cols, c0 + block.cols);
      float amax = 0.0f;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) {
          const float x = at(r, c);
          if (!std::isfinite(x))
            throw std::invalid_argument(fmt::format("e4m3::quantize: element [{}, {}] is not finite", r, c));
          amax = std::max(amax, std::abs(x));
        }
      const float scale = scale_for(amax);
      m.scales[static_cast<std::size_t>(br * m.scale_columns() + bc)] = scale;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c)
          m.codes[static_cast<std::size_t>(r * cols + c)] = e4m3::quantize(at(r, c), scale);
    }
  }
  return m;
}

std::vector<double> dequantize(const ScaledMatrix &m) {
  std::vector<double> values(m.codes.size());
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (std::int64_t c = 0; c < m.cols; ++c)
      values[static_cast<std::size_t>(r * m.cols + c)] = m.value_at(r, c);
  return values;
}

} // namespace kibench::e4m3
