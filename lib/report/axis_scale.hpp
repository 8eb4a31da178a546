// Maps data values to pixel positions along one chart axis, and chooses
// the tick values to label it with. Linear axes start from round numbers;
// logarithmic ones (sweeps over an axis, latencies spanning decades) put ticks at
// 1, 2 and 5 times powers of ten, or at given values.
#pragma once

#include <cstddef>
#include <vector>

namespace kibench::report {

class AxisScale {
public:
  enum class Kind { linear, logarithmic };

  // A linear axis over [0, max(largest, ε)], widened to a round number.
  static AxisScale linear_from_zero(double largest, double range_start, double range_end);
  // A logarithmic axis over [smallest, largest] (both > 0), padded by
  // `padding` (a factor) on each side so points do not sit on the frame.
  static AxisScale logarithmic(double smallest, double largest, double range_start, double range_end,
                               double padding = 1.25);

  // Pixel position of `value` (clamped into the domain on a log axis,
  // where values <= 0 have no position).
  [[nodiscard]] double position(double value) const;
  // About `target` round tick values inside the domain.
  [[nodiscard]] std::vector<double> ticks(std::size_t target = 5) const;

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] double domain_start() const { return domain_start_; }
  [[nodiscard]] double domain_end() const { return domain_end_; }

private:
  AxisScale(Kind kind, double domain_start, double domain_end, double range_start, double range_end);

  Kind kind_;
  double domain_start_, domain_end_;
  double range_start_, range_end_;
};

// 1, 2 or 5 times a power of ten, the smallest not below `value` (> 0).
double nice_step(double value);

} // namespace kibench::report
