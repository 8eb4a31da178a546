// Uniform random indices for resampling, reproducible on every platform:
// std::mt19937_64's output sequence is fixed by the C++ standard, but the
// mapping of std::uniform_int_distribution is not, so the bounded draw is
// done here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>

namespace kibench::stats {

class RandomIndex {
public:
  explicit RandomIndex(std::uint64_t seed) : engine_(seed) {}

  // Uniform on [0, n), n > 0, without modulo bias: 2^64 mod n is the count of
  // raw values that would make the low residues more likely; rejecting the
  // raw values below it leaves a range whose length is a multiple of n.
  std::size_t below(std::size_t n) {
    const auto bound = static_cast<std::uint64_t>(n);
    const std::uint64_t rejected = (0 - bound) % bound; // 2^64 mod n
    for (;;) {
      const std::uint64_t raw = engine_();
      if (raw >= rejected) return static_cast<std::size_t>(raw % bound);
    }
  }

private:
  std::mt19937_64 engine_;
};

// A seed for one named stream of a seeded computation: FNV-1a of the name,
// mixed with the seed by SplitMix64's finalizer. Each comparison gets its own
// stream, so its result does not depend on which other comparisons ran first.
inline std::uint64_t derive_seed(std::uint64_t seed, std::string_view stream) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : stream) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (hash | 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace kibench::stats
