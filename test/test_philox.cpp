// The input generators: Philox4x32-10 against Random123's published
// known-answer vectors, then the element mapping of inputs/philox.hpp as
// implemented by inputs/generate.hpp (ranges, moments, targets, seeds).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "lib/error.hpp"
#include "lib/inputs/bf16.hpp"
#include "lib/inputs/generate.hpp"
#include "lib/inputs/philox.hpp"

using namespace kibench;

namespace {

GeneratorSpec uniform_spec(std::uint64_t seed, double low, double high) {
  GeneratorSpec spec;
  spec.name = "philox4x32_10_uniform";
  spec.seed = seed;
  spec.low = low;
  spec.high = high;
  return spec;
}

GeneratorSpec target_spec(std::uint64_t seed, std::int64_t vocab, double ignore_fraction) {
  GeneratorSpec spec;
  spec.name = "philox4x32_10_uniform_int";
  spec.seed = seed;
  spec.low = 0;
  spec.high = static_cast<double>(vocab);
  spec.ignore_fraction = ignore_fraction;
  return spec;
}

struct Moments {
  double mean = 0.0;
  double variance = 0.0;
};

Moments moments(const std::vector<double> &values) {
  Moments m;
  for (double v : values) m.mean += v;
  m.mean /= static_cast<double>(values.size());
  for (double v : values) m.variance += (v - m.mean) * (v - m.mean);
  m.variance /= static_cast<double>(values.size() - 1);
  return m;
}

} // namespace

TEST_CASE("Philox4x32-10 matches Random123's known-answer vectors", "[philox]") {
  struct Vector {
    philox::Block counter;
    std::uint32_t key0, key1;
    philox::Block expected;
  };
  const Vector vectors[] = {
      {{{0u, 0u, 0u, 0u}}, 0u, 0u, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Vector &v : vectors) {
    const philox::Block out = philox::philox4x32_10(v.counter, v.key0, v.key1);
    for (int k = 0; k < 4; ++k) {
      INFO("word " << k);
      CHECK(out.w[k] == v.expected.w[k]);
    }
  }
}

TEST_CASE("block_at puts the index in counter words 0-1 and the seed in the key", "[philox]") {
  const std::uint64_t index = 0x0123456789abcdefULL, seed = 0xfedcba9876543210ULL;
  const philox::Block direct =
      philox::philox4x32_10(philox::Block{{0x89abcdefu, 0x01234567u, 0u, 0u}}, 0x76543210u, 0xfedcba98u);
  const philox::Block via_index = philox::block_at(index, seed);
  for (int k = 0; k < 4; ++k) CHECK(via_index.w[k] == direct.w[k]);
}

TEST_CASE("bf16 conversions round to nearest even and widen exactly", "[philox][bf16]") {
  CHECK(bf16::from_float(1.0f) == 0x3F80);
  CHECK(bf16::to_float(0x3F80) == 1.0f);
  CHECK(bf16::to_double(0xC040) == -3.0);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
  CHECK(bf16::round_to_bf16(1.0f + 0x1p-8f) == 1.0f);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  CHECK(bf16::round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);
  // Just above the half rounds up.
  CHECK(bf16::round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);
  CHECK(std::isnan(bf16::to_float(bf16::from_float(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isinf(bf16::round_to_bf16(std::numeric_limits<float>::max())));
  // Every bf16 survives a round trip through float.
  for (std::uint32_t bits = 0; bits < 0x10000u; bits += 7) {
    const auto b = static_cast<std::uint16_t>(bits);
    if (!std::isnan(bf16::to_float(b))) CHECK(bf16::from_float(bf16::to_float(b)) == b);
  }
}

TEST_CASE("uniform elements follow the stream layout of philox.hpp", "[philox]") {
  const GeneratorSpec spec = uniform_spec(0x5eedULL, -0.25, 0.75);
  for (std::uint64_t index : {0ULL, 1ULL, 2ULL, 3ULL, 4ULL, 1001ULL, (1ULL << 33) + 6}) {
    // Counter {i/4 low, i/4 high, 0, 0}, key {seed low, seed high}, word i % 4.
    const std::uint64_t block = index / 4;
    const philox::Block words = philox::philox4x32_10(
        philox::Block{{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), 0u, 0u}},
        0x5eedu, 0u);
    const double u = static_cast<double>(words.w[index % 4] >> 8) / 16777216.0;
    const double width = spec.high - spec.low;
    const double scaled = width * u;
    const double expected = spec.low + scaled;
    CHECK(uniform_value_at(spec, index) == expected);
    const float narrowed = static_cast<float>(expected);
    CHECK(bf16::to_float(uniform_bf16_at(spec, index)) == bf16::round_to_bf16(narrowed));
  }
}

TEST_CASE("uniform values lie in the half-open range low..high with the uniform distribution's moments",
          "[philox]") {
  const auto [low, high] =
      GENERATE(table<double, double>({{0.0, 1.0}, {-1.0 / 64.0, 1.0 / 64.0}, {-3.0, 5.0}}));
  const GeneratorSpec spec = uniform_spec(1234, low, high);
  constexpr std::size_t n = 200000;
  std::vector<double> values(n), rounded(n);
  std::vector<std::uint16_t> bits(n);
  fill_uniform_bf16(spec, bits);
  for (std::size_t k = 0; k < n; ++k) {
    values[k] = uniform_value_at(spec, k);
    rounded[k] = bf16::to_double(bits[k]);
  }
  CHECK(*std::min_element(values.begin(), values.end()) >= low);
  CHECK(*std::max_element(values.begin(), values.end()) < high);
  // bf16 rounding may land exactly on high, never beyond.
  CHECK(*std::min_element(rounded.begin(), rounded.end()) >= low);
  CHECK(*std::max_element(rounded.begin(), rounded.end()) <= high);

  const double width = high - low;
  const Moments m = moments(values);
  const double mean_sigma = width / std::sqrt(12.0 * n);
  CHECK(std::abs(m.mean - (low + high) / 2) < 5 * mean_sigma);
  CHECK(m.variance == Approx(width * width / 12).epsilon(0.02));
  // bf16 rounding (relative 2^-9) barely moves the moments.
  const Moments mr = moments(rounded);
  CHECK(std::abs(mr.mean - m.mean) < 0.01 * width);
  CHECK(mr.variance == Approx(m.variance).epsilon(0.02));
}

TEST_CASE("bulk fill equals element-by-element generation at any offset", "[philox]") {
  const GeneratorSpec spec = uniform_spec(77, -0.5, 0.5);
  for (std::uint64_t first : {0ULL, 3ULL, 1ULL << 20}) {
    std::vector<std::uint16_t> bulk(100003);
    fill_uniform_bf16(spec, bulk, first);
    std::size_t mismatches = 0;
    for (std::size_t k = 0; k < bulk.size(); ++k) mismatches += bulk[k] != uniform_bf16_at(spec, first + k);
    CHECK(mismatches == 0);
  }
  const GeneratorSpec targets = target_spec(9, 50, 0.1);
  std::vector<std::int64_t> bulk(70001);
  fill_targets(targets, -100, bulk, 5);
  std::size_t mismatches = 0;
  for (std::size_t k = 0; k < bulk.size(); ++k) mismatches += bulk[k] != target_at(targets, -100, 5 + k);
  CHECK(mismatches == 0);
}

TEST_CASE("targets: ignore_fraction 0, 0.25 and 1", "[philox]") {
  constexpr std::int64_t vocab = 7, ignore = -100;
  constexpr std::size_t n = 100000;
  std::vector<std::int64_t> y(n);

  fill_targets(target_spec(3, vocab, 0.0), ignore, y);
  std::vector<std::size_t> histogram(vocab, 0);
  for (std::int64_t t : y) {
    REQUIRE(t >= 0);
    REQUIRE(t < vocab);
    ++histogram[static_cast<std::size_t>(t)];
  }
  // Each class: n/7 expected, binomial sigma ~ 111; allow 5 sigma.
  for (std::size_t count : histogram) CHECK(std::abs(static_cast<double>(count) - n / 7.0) < 560.0);

  fill_targets(target_spec(3, vocab, 0.25), ignore, y);
  const auto ignored = static_cast<double>(std::count(y.begin(), y.end(), ignore));
  // sigma = sqrt(n * 0.25 * 0.75) ~ 137.
  CHECK(std::abs(ignored - 0.25 * n) < 5 * 137.0);
  for (std::int64_t t : y) REQUIRE((t == ignore || (t >= 0 && t < vocab)));

  fill_targets(target_spec(3, vocab, 1.0), ignore, y);
  CHECK(std::all_of(y.begin(), y.end(), [](std::int64_t t) { return t == ignore; }));

  // A nonzero low shifts the range.
  GeneratorSpec shifted = target_spec(3, 0, 0.0);
  shifted.low = 10;
  shifted.high = 13;
  fill_targets(shifted, ignore, y);
  CHECK(*std::min_element(y.begin(), y.end()) == 10);
  CHECK(*std::max_element(y.begin(), y.end()) == 12);

  GeneratorSpec empty_range = target_spec(3, 0, 0.0);
  CHECK_THROWS_AS(target_at(empty_range, ignore, 0), InputError);
}

TEST_CASE("same seed gives the same inputs, another seed different ones", "[philox]") {
  Workload w;
  w.tokens = 5;
  w.vocab = 33;
  w.hidden = 8;
  w.student_hidden = 4;
  w.student_input = uniform_spec(1, 0.0, 1.0);
  w.student_weight = uniform_spec(2, -0.5, 0.5);
  w.teacher_input = uniform_spec(3, 0.0, 1.0);
  w.teacher_weight = uniform_spec(4, -0.35, 0.35);
  w.target = target_spec(5, 33, 0.0);
  w.student_bias = uniform_spec(6, -0.5, 0.5);

  const HostInputs a = generate_host_inputs(w);
  CHECK(a.student_input.size() == 5 * 4);
  CHECK(a.student_weight.size() == 33 * 4);
  CHECK(a.teacher_input.size() == 5 * 8);
  CHECK(a.teacher_weight.size() == 33 * 8);
  CHECK(a.target.size() == 5);
  CHECK(a.student_bias.size() == 33);
  CHECK(a.teacher_bias.empty());

  const HostInputs same = generate_host_inputs(w);
  CHECK(same.student_input == a.student_input);
  CHECK(same.teacher_weight == a.teacher_weight);
  CHECK(same.target == a.target);
  CHECK(same.student_bias == a.student_bias);

  w.student_input.seed = 100;
  w.teacher_weight.seed = 101;
  w.target.seed = 102;
  const HostInputs other = generate_host_inputs(w);
  CHECK(other.student_input != a.student_input);
  CHECK(other.teacher_weight != a.teacher_weight);
  CHECK(other.target != a.target);
  CHECK(other.student_weight == a.student_weight); // its seed did not change

  InputSet set(w);
  CHECK_FALSE(set.has_host());
  const HostInputs &cached = set.host();
  CHECK(set.has_host());
  CHECK(&set.host() == &cached);
  CHECK(cached.student_input == other.student_input);

  w.student_input.name = "normal";
  CHECK_THROWS_AS(generate_host_inputs(w), InputError);
}
