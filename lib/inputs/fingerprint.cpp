#include "lib/inputs/fingerprint.hpp"

#include <cstring>

namespace kibench {

std::uint64_t fingerprint_bytes(const void *data, std::size_t bytes) {
  const auto *p = static_cast<const unsigned char *>(data);
  const std::size_t words = bytes / 8;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + 8 * i, 8);
    sum += fingerprint_mix(w ^ ((i + 1) * kFingerprintGolden));
  }
  if (const std::size_t tail = bytes % 8; tail != 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + 8 * words, tail);
    sum += fingerprint_mix(w ^ ((words + 1) * kFingerprintGolden));
  }
  return sum;
}

} // namespace kibench
