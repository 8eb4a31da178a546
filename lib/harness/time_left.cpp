#include "lib/harness/time_left.hpp"

#include <algorithm>
#include <cmath>

#include "lib/harness/stopping_rule.hpp"

namespace kibench {

namespace {

// The smallest n whose median_relative_standard_error is within `target`
// at `spread`, as a double (it may exceed any cap).
double samples_for_noise(double spread, double target) {
  if (!(spread > 0.0)) return 0.0; // identical samples: any count meets it
  if (!(target > 0.0)) return std::numeric_limits<double>::infinity();
  // median_relative_standard_error(spread, n) = c / sqrt(n) <= target.
  const double c = kMedianStandardErrorFactor * spread;
  return std::ceil((c / target) * (c / target));
}

} // namespace

std::size_t samples_needed(const LaneProgress &lane, const ProtocolSettings &settings) {
  if (lane.rule_met) return lane.samples;
  const double cap = static_cast<double>(settings.max_samples);
  double needed =
      std::max(static_cast<double>(settings.min_samples), static_cast<double>(lane.samples) + 1.0);
  if (lane.samples > 0 && lane.sampled_s < settings.min_time_s) {
    const double mean_s = lane.sampled_s / static_cast<double>(lane.samples);
    needed = std::max(needed, mean_s > 0.0 ? static_cast<double>(lane.samples) +
                                                 std::ceil((settings.min_time_s - lane.sampled_s) / mean_s)
                                           : cap);
  }
  if (lane.samples >= 2 && std::isfinite(lane.relative_spread))
    needed = std::max(needed, samples_for_noise(lane.relative_spread, settings.max_noise));
  return static_cast<std::size_t>(std::min(needed, cap));
}

std::optional<double> time_left_s(const std::vector<LaneProgress> &lanes, const ProtocolSettings &settings) {
  // The wall time of one sample: the lane's own, or the mean of those
  // measured for a lane that has not sampled yet.
  double known_wall = 0.0;
  std::size_t known = 0;
  for (const LaneProgress &l : lanes) {
    if (l.samples == 0) continue;
    known_wall += l.wall_s / static_cast<double>(l.samples);
    ++known;
  }
  if (known == 0) return std::nullopt;
  const double fallback_wall = known_wall / static_cast<double>(known);
  const auto wall_of = [&](const LaneProgress &l) {
    return l.samples > 0 ? l.wall_s / static_cast<double>(l.samples) : fallback_wall;
  };

  std::vector<std::size_t> more(lanes.size(), 0);
  std::size_t neediest = 0;
  for (std::size_t k = 0; k < lanes.size(); ++k) {
    if (lanes[k].at_cap) continue;
    const std::size_t needed = samples_needed(lanes[k], settings);
    more[k] = needed - std::min(lanes[k].samples, needed);
    neediest = std::max(neediest, more[k]);
  }
  if (settings.share_rounds && settings.interleave) {
    // Every lane samples as long as the neediest, short of its own cap.
    for (std::size_t k = 0; k < lanes.size(); ++k) {
      const LaneProgress &l = lanes[k];
      if (l.at_cap) continue;
      const std::size_t to_cap = settings.max_samples - std::min(settings.max_samples, l.samples);
      more[k] = std::min(neediest, to_cap);
    }
  }
  double left = 0.0;
  for (std::size_t k = 0; k < lanes.size(); ++k) {
    const LaneProgress &l = lanes[k];
    const double sampling = static_cast<double>(more[k]) * wall_of(l);
    // Each rule stops once its own samples have taken --timeout of wall
    // time, and not before its first sample.
    const double first_sample = l.samples == 0 && more[k] > 0 ? wall_of(l) : 0.0;
    const double to_limit = std::max(0.0, settings.timeout_s - l.wall_s) + first_sample;
    left += std::min(sampling, to_limit) + l.sustained_s;
  }
  return left;
}

} // namespace kibench
