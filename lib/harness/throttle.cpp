#include "lib/harness/throttle.hpp"

#include <algorithm>

namespace kibench {

void flag_throttled(Measurement &m, double fraction) {
  double highest = 0.0;
  for (const auto &s : m.samples)
    if (s.clock_mhz) highest = std::max(highest, *s.clock_mhz);
  for (auto &s : m.samples) s.throttled = s.clock_mhz && *s.clock_mhz < fraction * highest;
}

} // namespace kibench
