// The fp64 oracle's arithmetic on the CPU, shared by the oracle
// (cpu_oracle.cpp) and the studies that must round exactly as it does
// (dev/fp8/): bf16 widened to double (exact), and the dot product in a fixed
// order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lib/inputs/bf16.hpp"

namespace kibench::oracle {

// bf16 bits as doubles: exact, every bf16 value is a double.
inline std::vector<double> widen(const std::vector<std::uint16_t> &bits) {
  std::vector<double> values(bits.size());
  std::transform(bits.begin(), bits.end(), values.begin(), bf16::to_double);
  return values;
}

// Four independent partial sums in a fixed order: deterministic, and twice
// as fast as one serial chain.
inline double dot(const double *a, const double *b, std::int64_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  std::int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += a[k] * b[k];
    s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2];
    s3 += a[k + 3] * b[k + 3];
  }
  for (; k < n; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

} // namespace kibench::oracle
