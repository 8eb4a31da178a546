// FP8 e4m3 on the host (kernels/lm_head/fused/e4m3.hpp, e4m3_scaling.hpp): the
// codes of known values, round to nearest even against a brute-force
// search over every code, saturation at 448, subnormals, the scale rule,
// and block-scaled matrices. The device's conversion is checked against
// these in test_gpu_fused_fp8_teacher.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels/lm_head/fused/e4m3.hpp"
#include "kernels/lm_head/fused/e4m3_scaling.hpp"
#include "lib/inputs/bf16.hpp"

using namespace kibench;

namespace {

// The code nearest to `value` among all finite codes, ties to the even
// code (mantissa bit 0), magnitudes past 448 saturated: the definition,
// searched rather than computed.
std::uint8_t nearest_code(float value) {
  const double x = std::clamp(static_cast<double>(value), -448.0, 448.0);
  int best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 256; ++code) {
    const float v = e4m3::to_float(static_cast<std::uint8_t>(code));
    if (std::isnan(v)) continue;
    if (v == 0.0f && std::signbit(v) != std::signbit(value)) continue; // keep the zero's sign
    const double distance = std::abs(static_cast<double>(v) - x);
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return static_cast<std::uint8_t>(best);
}

} // namespace

TEST_CASE("e4m3: known codes", "[e4m3]") {
  CHECK(e4m3::from_float(0.0f) == 0x00);
  CHECK(e4m3::from_float(-0.0f) == 0x80);
  CHECK(e4m3::from_float(1.0f) == 0x38);   // exponent 7 (bias 7), mantissa 0
  CHECK(e4m3::from_float(-2.0f) == 0xC0);  // sign, exponent 8
  CHECK(e4m3::from_float(1.125f) == 0x39); // mantissa 1
  CHECK(e4m3::from_float(240.0f) == 0x77); // 1.875 · 2^7
  CHECK(e4m3::from_float(256.0f) == 0x78); // exponent 15, the top binade
  CHECK(e4m3::from_float(448.0f) == 0x7E); // the largest finite: S.1111.110
  CHECK(e4m3::from_float(-448.0f) == 0xFE);
  CHECK(e4m3::from_float(0x1p-6f) == 0x08); // the smallest normal
  CHECK(e4m3::from_float(0x1p-9f) == 0x01); // the smallest subnormal
  CHECK(e4m3::from_float(7 * 0x1p-9f) == 0x07);
  CHECK(e4m3::to_float(0x7E) == 448.0f);
  CHECK(e4m3::to_float(0x01) == 0x1p-9f);
  CHECK(e4m3::to_float(0x07) == 7 * 0x1p-9f);
  CHECK(e4m3::to_float(0x08) == 0x1p-6f);
  CHECK(e4m3::to_float(0xB8) == -1.0f);
  CHECK(std::isnan(e4m3::to_float(0x7F)));
  CHECK(std::isnan(e4m3::to_float(0xFF)));
  CHECK(e4m3::from_float(std::numeric_limits<float>::quiet_NaN()) == e4m3::kNanCode);
}

TEST_CASE("e4m3: ties round to the even code, subnormals included", "[e4m3]") {
  CHECK(e4m3::from_float(1.0625f) == 0x38);    // between 1 (even) and 1.125
  CHECK(e4m3::from_float(1.1875f) == 0x3A);    // between 1.125 and 1.25 (even)
  CHECK(e4m3::from_float(1.0625001f) == 0x39); // just past the tie
  CHECK(e4m3::from_float(0x1p-10f) == 0x00);   // half the smallest subnormal: to zero
  CHECK(e4m3::from_float(-0x1p-10f) == 0x80);
  CHECK(e4m3::from_float(0x1.000002p-10f) == 0x01);
  CHECK(e4m3::from_float(3 * 0x1p-10f) == 0x02);  // between 1 and 2 quanta
  CHECK(e4m3::from_float(15 * 0x1p-10f) == 0x08); // between 7 quanta and 2^-6 (code 8)
  CHECK(e4m3::from_float(13 * 0x1p-10f) == 0x06); // between 6 (even) and 7 quanta
  CHECK(e4m3::from_float(0x1.1p-6f) == 0x08);     // 2^-6 · 1.0625: the normal tie, to even
  CHECK(e4m3::from_float(0x1p-12f) == 0x00);      // far below: zero
}

TEST_CASE("e4m3: saturation at 448 (infinities too)", "[e4m3]") {
  CHECK(e4m3::from_float(447.0f) == 0x7E);
  CHECK(e4m3::from_float(448.5f) == 0x7E);
  CHECK(e4m3::from_float(464.0f) == 0x7E); // the rounding boundary toward NaN's code
  CHECK(e4m3::from_float(500.0f) == 0x7E);
  CHECK(e4m3::from_float(1e30f) == 0x7E);
  CHECK(e4m3::from_float(-1e30f) == 0xFE);
  CHECK(e4m3::from_float(std::numeric_limits<float>::infinity()) == 0x7E);
  CHECK(e4m3::from_float(-std::numeric_limits<float>::infinity()) == 0xFE);
  CHECK(e4m3::from_float(416.0f) == 0x7D);
  CHECK(e4m3::from_float(432.0f) == 0x7E); // tie between 416 and 448 (even)
}

TEST_CASE("e4m3: every code round-trips, and every bf16 value rounds to the nearest code", "[e4m3]") {
  for (int code = 0; code < 256; ++code) {
    const auto c = static_cast<std::uint8_t>(code);
    if (std::isnan(e4m3::to_float(c))) continue;
    INFO("code " << code);
    CHECK(e4m3::from_float(e4m3::to_float(c)) == c);
  }
  // Every finite bf16 value (the teacher's inputs are bf16, divided by a
  // scale; bf16 covers every binade e4m3 has, with finer steps), and the
  // midpoints between consecutive e4m3 values and their float neighbours.
  int mismatches = 0;
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float v = bf16::to_float(static_cast<std::uint16_t>(bits));
    if (!std::isfinite(v)) continue;
    if (e4m3::from_float(v) != nearest_code(v)) ++mismatches;
  }
  CHECK(mismatches == 0);
  for (int code = 0; code < 0x7E; ++code) {
    const float low = e4m3::to_float(static_cast<std::uint8_t>(code));
    const float high = e4m3::to_float(static_cast<std::uint8_t>(code + 1));
    const float mid = (low + high) / 2; // exact: both have 4 significant bits
    for (const float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), -mid}) {
      INFO("between codes " << code << " and " << code + 1 << ": " << v);
      CHECK(e4m3::from_float(v) == nearest_code(v));
    }
  }
}

TEST_CASE("e4m3: the scale puts a block's largest magnitude on 448", "[e4m3]") {
  CHECK(e4m3::scale_for(0.0f) == 1.0f);
  CHECK(e4m3::scale_for(448.0f) == 1.0f);
  CHECK(e4m3::scale_for(1.0f) == 1.0f / 448.0f);
  CHECK(e4m3::scale_for(0.015625f) == 0.015625f / 448.0f);
  // amax / (amax / 448) is 448 within a rounding, which saturates or rounds
  // to the top code either way.
  for (std::uint32_t bits = 0x0080; bits < 0x7F80; bits += 37) {
    const float amax = bf16::to_float(static_cast<std::uint16_t>(bits));
    INFO("amax " << amax);
    CHECK(e4m3::quantize(amax, e4m3::scale_for(amax)) == 0x7E);
    CHECK(e4m3::quantize(-amax, e4m3::scale_for(amax)) == 0xFE);
  }
}

TEST_CASE("e4m3 scaling: per row, per 1 x 128 and per 128 x 128 block", "[e4m3]") {
  // A [200, 300] matrix: edge blocks of 72 rows and 44 columns, a row of
  // zeros, and magnitudes over six binades so that some rows reach e4m3's
  // subnormals.
  const std::int64_t rows = 200, cols = 300;
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const double wave =
          std::sin(0.37 * static_cast<double>(r * cols + c)) * std::ldexp(1.0, -static_cast<int>(c % 7));
      const float v = r == 17 ? 0.0f : static_cast<float>(wave * (1.0 + 0.01 * static_cast<double>(r)));
      bits[static_cast<std::size_t>(r * cols + c)] = bf16::from_float(v);
    }
  const auto value = [&](std::int64_t r, std::int64_t c) {
    return bf16::to_float(bits[static_cast<std::size_t>(r * cols + c)]);
  };
  for (const e4m3::BlockShape block :
       {e4m3::BlockShape{1, 0}, e4m3::BlockShape{1, 128}, e4m3::BlockShape{128, 128}}) {
    INFO("block " << block.rows << " x " << block.cols);
    const e4m3::ScaledMatrix m = e4m3::quantize(bits, rows, cols, block);
    const std::int64_t bc = block.cols == 0 ? cols : block.cols;
    CHECK(m.block.cols == bc);
    CHECK(m.scales.size() ==
          static_cast<std::size_t>(((rows + block.rows - 1) / block.rows) * ((cols + bc - 1) / bc)));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        // The block's amax, recomputed.
        const std::int64_t r0 = r / block.rows * block.rows, c0 = c / bc * bc;
        float amax = 0.0f;
        for (std::int64_t i = r0; i < std::min(rows, r0 + block.rows); ++i)
          for (std::int64_t j = c0; j < std::min(cols, c0 + bc); ++j)
            amax = std::max(amax, std::abs(value(i, j)));
        const float scale = m.scale_at(r, c);
        REQUIRE(scale == e4m3::scale_for(amax));
        REQUIRE(m.codes[static_cast<std::size_t>(r * cols + c)] == e4m3::from_float(value(r, c) / scale));
        // Within half a quantum: 2^-4 relative in the normal range, 2^-10 of
        // the scale in the subnormal one (and the fp32 rounding of x / s,
        // 2^-24 relative, beside it).
        const double error = std::abs(m.value_at(r, c) - static_cast<double>(value(r, c)));
        REQUIRE(error <= std::max(std::abs(static_cast<double>(value(r, c))) * 0x1.0001p-4,
                                  static_cast<double>(scale) * 0x1.0001p-10));
      }
    CHECK(m.scale_at(17, 0) == (block.rows == 1 ? 1.0f : m.scale_at(16, 0))); // the zero row
    const std::vector<double> values = e4m3::dequantize(m);
    CHECK(values[1234] == m.value_at(1234 / cols, 1234 % cols));
  }
  // Per row, the zero row keeps scale 1 and zero codes.
  const e4m3::ScaledMatrix per_row = e4m3::quantize(bits, rows, cols, {1, 0});
  CHECK(per_row.scale_at(17, 5) == 1.0f);
  CHECK(per_row.codes[static_cast<std::size_t>(17 * cols + 5)] == 0x00);
}

TEST_CASE("e4m3 scaling: refuses a size mismatch, an empty block and a nonfinite element", "[e4m3]") {
  std::vector<std::uint16_t> bits(12, bf16::from_float(1.0f));
  CHECK_THROWS_AS(e4m3::quantize(bits, 3, 5, {1, 0}), std::invalid_argument);
  CHECK_THROWS_AS(e4m3::quantize(bits, 3, 4, {0, 4}), std::invalid_argument);
  bits[7] = 0x7F80; // +inf
  CHECK_THROWS_AS(e4m3::quantize(bits, 3, 4, {1, 0}), std::invalid_argument);
}
