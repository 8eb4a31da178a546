// FP8 E4M3 (OCP 8-bit floating point, the "fn" variant Hopper's tensor
// cores take) on the host, as raw byte codes: sign, 4 exponent bits (bias
// 7), 3 mantissa bits; no infinities, S.1111.111 is NaN, so the largest
// finite magnitude is 1.75 · 2^8 = 448 (S.1111.110). Normal codes hold
// (1 + m/8) · 2^(e − 7) for e = 1..15, subnormals m · 2^−9 (e = 0), the
// smallest 2^−9.
//
// Narrowing is what the device's cvt.rn.satfinite.e4m3x2.f32
// (__nv_cvt_float_to_fp8 with __NV_SATFINITE) does: round to nearest,
// ties to even, subnormals included, magnitudes past 448 (infinities too)
// saturated to ±448; the [gpu] tests compare the two bit for bit.
//
// A scaled tensor stores q = e4m3(x / s) with one fp32 scale s per block
// of elements (a row, a 128-element run, a 128 x 128 tile), s = amax / 448
// over the block, so the block's largest magnitude lands on 448; a block
// of zeros gets s = 1. Its value is s · q.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace kibench::e4m3 {

inline constexpr float kMax = 448.0f;
inline constexpr std::uint8_t kMaxCode = 0x7E; // +448
inline constexpr std::uint8_t kNanCode = 0x7F;

[[nodiscard]] inline float to_float(std::uint8_t code) {
  const float sign = (code & 0x80u) != 0 ? -1.0f : 1.0f;
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

// Round to nearest even, saturating; NaN gives kNanCode.
[[nodiscard]] inline std::uint8_t from_float(float value) {
  if (std::isnan(value)) return kNanCode;
  const std::uint8_t sign = std::signbit(value) ? 0x80u : 0x00u;
  const double magnitude = std::abs(static_cast<double>(value));
  if (magnitude >= kMax) return sign | kMaxCode;
  // Below 2^-6 the quantum is 2^-9: codes 0..7 are m · 2^-9, and a magnitude
  // that rounds up to 8 quanta is 2^-6, code 8, the smallest normal.
  if (magnitude < 0x1p-6) return sign | static_cast<std::uint8_t>(std::nearbyint(magnitude * 0x1p9));
  // magnitude = f · 2^e with f in [1, 2): the quantum is 2^(e-3), so
  // 8 f rounds to an integer in [8, 16]; 16 carries into the next binade.
  int e = 0;
  const double f = 2.0 * std::frexp(magnitude, &e);
  e -= 1;
  auto quanta = static_cast<int>(std::nearbyint(8.0 * f));
  if (quanta == 16) {
    quanta = 8;
    ++e;
  }
  // e <= 8 here: below 448 the binade [256, 512) rounds to at most 14
  // quanta (448), so no code reaches S.1111.111 (NaN).
  return sign | static_cast<std::uint8_t>(((e + 7) << 3) | (quanta - 8));
}

// The value an e4m3 store of `value` leaves behind.
[[nodiscard]] inline float round(float value) {
  return to_float(from_float(value));
}

// The scale of a block whose largest magnitude is `amax` (finite, >= 0):
// amax / 448 rounded to fp32, and 1 for an all-zero block.
[[nodiscard]] inline float scale_for(float amax) {
  return amax == 0.0f ? 1.0f : amax / kMax;
}

// The code of element `value` of a block with scale `scale`: e4m3(value / scale),
// the quotient rounded to fp32 first as the device's division does.
[[nodiscard]] inline std::uint8_t quantize(float value, float scale) {
  return from_float(value / scale);
}

} // namespace kibench::e4m3
