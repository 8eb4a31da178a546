// bfloat16 as raw bit patterns: the upper half of an IEEE binary32. Widening
// is exact (append 16 zero bits); narrowing rounds to nearest, ties to even,
// which is what torch's bf16 casts and cuBLAS's bf16 outputs do.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "lib/inputs/philox.hpp"

namespace kibench::bf16 {

[[nodiscard]] inline float to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

[[nodiscard]] inline double to_double(std::uint16_t bits) {
  return static_cast<double>(to_float(bits));
}

// Round to nearest even; NaN stays a (quiet) NaN of the same sign, values
// beyond the largest bf16 round to infinity as IEEE rounding demands.
[[nodiscard]] inline std::uint16_t from_float(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  return philox::bf16_from_float_bits(bits);
}

// The value a bf16 store of `value` leaves behind, as a float.
[[nodiscard]] inline float round_to_bf16(float value) {
  return to_float(from_float(value));
}

} // namespace kibench::bf16
