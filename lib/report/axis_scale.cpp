#include "lib/report/axis_scale.hpp"

#include <algorithm>
#include <cmath>

namespace kibench::report {

double nice_step(double value) {
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (const double multiple : {1.0, 2.0, 5.0, 10.0}) {
    if (multiple * power >= value * (1.0 - 1e-9)) return multiple * power;
  }
  return 10.0 * power;
}

AxisScale::AxisScale(Kind kind, double domain_start, double domain_end, double range_start, double range_end)
    : kind_(kind), domain_start_(domain_start), domain_end_(domain_end), range_start_(range_start),
      range_end_(range_end) {}

AxisScale AxisScale::linear_from_zero(double largest, double range_start, double range_end) {
  // An all-zero chart (a run that allocates nothing) still needs an axis.
  const double top = largest > 0.0 && std::isfinite(largest) ? largest : 1.0;
  // Round the end up to a whole tick step so the last tick closes the axis.
  const double step = nice_step(top / 5.0);
  return AxisScale(Kind::linear, 0.0, std::ceil(top / step - 1e-9) * step, range_start, range_end);
}

AxisScale AxisScale::logarithmic(double smallest, double largest, double range_start, double range_end,
                                 double padding) {
  double low = smallest > 0.0 ? smallest : 1.0;
  double high = largest > low ? largest : low;
  return AxisScale(Kind::logarithmic, low / padding, high * padding, range_start, range_end);
}

double AxisScale::position(double value) const {
  double fraction = 0.0;
  if (kind_ == Kind::linear) {
    fraction = (value - domain_start_) / (domain_end_ - domain_start_);
  } else {
    const double clamped = std::clamp(value, domain_start_, domain_end_);
    fraction = std::log(clamped / domain_start_) / std::log(domain_end_ / domain_start_);
  }
  return range_start_ + fraction * (range_end_ - range_start_);
}

std::vector<double> AxisScale::ticks(std::size_t target) const {
  std::vector<double> out;
  if (kind_ == Kind::linear) {
    const double step =
        nice_step((domain_end_ - domain_start_) / static_cast<double>(std::max<std::size_t>(target, 1)));
    for (double k = std::ceil(domain_start_ / step - 1e-9);; k += 1.0) {
      const double tick = k * step;
      if (tick > domain_end_ + step * 1e-9) break;
      out.push_back(tick);
    }
    return out;
  }
  // Decades first; when the domain spans too few of them, add 2× and 5×.
  const int first = static_cast<int>(std::floor(std::log10(domain_start_)));
  const int last = static_cast<int>(std::ceil(std::log10(domain_end_)));
  for (const auto &multiples : {std::vector<double>{1.0}, std::vector<double>{1.0, 2.0, 5.0},
                                std::vector<double>{1.0, 1.5, 2.0, 3.0, 5.0, 7.0}}) {
    out.clear();
    for (int exponent = first; exponent <= last; ++exponent) {
      for (const double multiple : multiples) {
        const double tick = multiple * std::pow(10.0, exponent);
        if (tick >= domain_start_ * (1.0 - 1e-9) && tick <= domain_end_ * (1.0 + 1e-9)) out.push_back(tick);
      }
    }
    if (out.size() >= 3) break;
  }
  // Too many for the space (a domain of many decades): keep every n-th.
  if (out.size() > 2 * target) {
    const std::size_t stride = (out.size() + target - 1) / target;
    std::vector<double> thinned;
    for (std::size_t i = 0; i < out.size(); i += stride) thinned.push_back(out[i]);
    out = std::move(thinned);
  }
  return out;
}

} // namespace kibench::report
