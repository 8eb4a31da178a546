// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011) and the element mapping kibench's generators use. Compiled by
// both g++ and nvcc so the CPU and the GPU produce bit-identical inputs:
//
//   float tensor, generator "philox4x32_10_uniform" {low, high}, seed s, element i
//   (row-major linear index):
//     w   = philox4x32_10(counter {i/4 low32, i/4 high32, 0, 0},
//                         key {s low32, s high32})[i % 4]
//     u   = (w >> 8) * 2^-24                      exact, in [0, 1)
//     v   = low + (high - low) * u                in double, multiply then add,
//                                                 each rounded (no FMA)
//     out = bf16_rne(float(v))                    round to nearest even
//
//   target, generator "philox4x32_10_uniform_int" {low, high, ignore_fraction}, token i:
//     w   = philox4x32_10(counter {i low32, i high32, 0, 0}, key as above)
//     y   = low + ((w[1] << 32 | w[0]) mod (high - low))
//     y   = ignore_index  if (w[2] >> 8) * 2^-24 < ignore_fraction
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KIBENCH_HD __host__ __device__ __forceinline__
#else
#define KIBENCH_HD inline
#endif

namespace kibench::philox {

struct Block {
  std::uint32_t w[4];
};

KIBENCH_HD void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t &hi, std::uint32_t &lo) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
}

// Ten rounds of Philox4x32 with the published multipliers and Weyl key bumps.
KIBENCH_HD Block philox4x32_10(Block counter, std::uint32_t key0, std::uint32_t key1) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kM0, counter.w[0], hi0, lo0);
    mulhilo(kM1, counter.w[2], hi1, lo1);
    counter = Block{{hi1 ^ counter.w[1] ^ key0, lo1, hi0 ^ counter.w[3] ^ key1, lo0}};
    key0 += kW0;
    key1 += kW1;
  }
  return counter;
}

KIBENCH_HD Block block_at(std::uint64_t index, std::uint64_t seed) {
  return philox4x32_10(
      Block{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), 0u, 0u}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// 24 random bits as a float in [0, 1), exactly representable.
KIBENCH_HD double unit_from_bits(std::uint32_t w) {
  return static_cast<double>(w >> 8) * (1.0 / 16777216.0);
}

// float -> bf16 bits, round to nearest even (inputs are finite here).
KIBENCH_HD std::uint16_t bf16_from_float_bits(std::uint32_t bits) {
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

} // namespace kibench::philox
