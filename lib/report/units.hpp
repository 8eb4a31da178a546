// Display units for the numbers a report shows: one unit per chart axis,
// chosen so the largest value reads between 1 and 1000.
#pragma once

#include <string>

namespace kibench::report {

struct DisplayUnit {
  double scale = 1.0; // value in base units / scale = value in this unit
  std::string name;   // "ms", "MB"
};

// ns, µs, ms or s for latencies up to `largest_ns`.
DisplayUnit time_unit_for(double largest_ns);
// B, kB, MB, GB or TB (decimal, as `kibench run` prints them).
DisplayUnit byte_unit_for(double largest_bytes);

// "2.746–2.863 ms": both ends in the unit of the larger.
std::string format_time_range(double low_ns, double high_ns);
// "1.2 MB", "780.5 kB", "512 B".
std::string format_bytes(double bytes);
// "123.4", "1.235", "0.00371": four significant digits.
std::string format_significant(double value, int digits = 4);
// A tick label: the shortest form of a round number ("0.2", "1500", "1e-05").
std::string format_tick(double value);

} // namespace kibench::report
