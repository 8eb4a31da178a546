// A 64-bit fingerprint of a buffer's bytes, the same on the host and on the
// device (kernels/cuda/input_fingerprint.cu): the sum over its 8-byte words
// w_i (the last one zero-padded) of mix(w_i XOR (i + 1)·φ), mod 2⁶⁴, where
// mix is SplitMix64's finalizer and φ = 0x9E3779B97F4A7C15. A sum of
// position-keyed mixes is order-free (a device reduction adds it in any
// order) and changes with any change of any byte, barring a 2⁻⁶⁴ accident.
// It guards the shared inputs against lanes that write into them; it is
// no cryptographic digest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kibench {

inline constexpr std::uint64_t kFingerprintGolden = 0x9E3779B97F4A7C15ull;

// The device's reduction (kernels/cuda/input_fingerprint.cu) calls it too.
#if defined(__CUDACC__)
#define KIBENCH_FINGERPRINT_HOST_DEVICE __host__ __device__
#else
#define KIBENCH_FINGERPRINT_HOST_DEVICE
#endif

KIBENCH_FINGERPRINT_HOST_DEVICE constexpr std::uint64_t fingerprint_mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

std::uint64_t fingerprint_bytes(const void *data, std::size_t bytes);

} // namespace kibench
