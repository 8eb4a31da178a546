#include "lib/harness/stopping_rule.hpp"

#include <cmath>
#include <limits>

#include "lib/stats/summary.hpp"

namespace kibench {

double median_relative_standard_error(double relative_spread, std::size_t count) {
  if (count < 2) return std::numeric_limits<double>::infinity();
  return kMedianStandardErrorFactor * relative_spread / std::sqrt(static_cast<double>(count));
}

StoppingRule::StoppingRule(const ProtocolSettings &settings) : settings_(settings) {}

void StoppingRule::add_sample(double ns, double wall_s) {
  samples_.push_back(ns);
  sampled_ns_ += ns;
  wall_s_ += wall_s;
  spread_.reset();
}

double StoppingRule::relative_spread() const {
  if (samples_.size() < 2) return std::numeric_limits<double>::infinity();
  if (!spread_) spread_ = stats::summarize(samples_).relative_noise;
  return *spread_;
}

double StoppingRule::relative_error() const {
  // sigma estimated robustly as 1.4826·MAD.
  return median_relative_standard_error(relative_spread(), samples_.size());
}

bool StoppingRule::finished() const {
  return !reason().empty();
}

bool StoppingRule::past_time_limit() const {
  return wall_s_ >= settings_.timeout_s && !samples_.empty();
}

bool StoppingRule::at_cap() const {
  return samples_.size() >= settings_.max_samples || past_time_limit();
}

std::string StoppingRule::reason() const {
  if (samples_.size() >= settings_.max_samples) return "max_samples";
  if (past_time_limit()) return "timeout";
  if (samples_.size() < settings_.min_samples || sampled_ns_ < settings_.min_time_s * 1e9) return "";
  return relative_error() <= settings_.max_noise ? "noise_target" : "";
}

} // namespace kibench
