#include "lib/report/units.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include <fmt/core.h>

namespace kibench::report {
namespace {

struct Step {
  double scale;
  const char *name;
};

DisplayUnit pick(double largest, std::initializer_list<Step> steps) {
  Step chosen = *steps.begin();
  for (const Step &step : steps) {
    if (std::fabs(largest) >= step.scale) chosen = step;
  }
  return DisplayUnit{chosen.scale, chosen.name};
}

} // namespace

DisplayUnit time_unit_for(double largest_ns) {
  return pick(largest_ns, {{1.0, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}});
}

DisplayUnit byte_unit_for(double largest_bytes) {
  return pick(largest_bytes, {{1.0, "B"}, {1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}});
}

std::string format_time_range(double low_ns, double high_ns) {
  const DisplayUnit unit = time_unit_for(high_ns);
  return fmt::format("{}–{} {}", format_significant(low_ns / unit.scale),
                     format_significant(high_ns / unit.scale), unit.name);
}

std::string format_bytes(double bytes) {
  const DisplayUnit unit = byte_unit_for(bytes);
  if (unit.scale == 1.0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.1f} {}", bytes / unit.scale, unit.name);
}

std::string format_significant(double value, int digits) {
  if (value == 0.0 || !std::isfinite(value)) return fmt::format("{}", value);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string format_tick(double value) {
  // Ticks are multiples of 1, 2 or 5 times a power of ten; six significant
  // digits hide the binary rounding of those products (0.30000000000000004).
  if (std::fabs(value) < 1e-12) return "0";
  return fmt::format("{:.6g}", value);
}

} // namespace kibench::report
