#include "lib/harness/stopping_rule.hpp"

#include <cmath>
#include <limits>

#include "lib/stats/summary.hpp"

namespace kibench {

double median_relative_standard_error(double relative_spread, std::size_t count) {
  if (count < 2) return std::numeric_limits<double>::infinity();
  return kMedianStandardErrorFactor * relative_spread / std::sqrt(static_cast<double>(count));
}

StoppingRule::StoppingRule(const ProtocolSettings &settings)
    : settings_(settings), started_(std::chrono::steady_clock::now()) {}

void StoppingRule::add_sample(double ns) {
  samples_.push_back(ns);
  sampled_ns_ += ns;
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

bool StoppingRule::at_cap() const {
  if (samples_.size() >= settings_.max_samples) return true;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return elapsed >= settings_.timeout_s && samples_.size() >= 1;
}

std::string StoppingRule::reason() const {
  if (samples_.size() >= settings_.max_samples) return "max_samples";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (elapsed >= settings_.timeout_s && samples_.size() >= 1) return "timeout";
  if (samples_.size() < settings_.min_samples || sampled_ns_ < settings_.min_time_s * 1e9) return "";
  return relative_error() <= settings_.max_noise ? "noise_target" : "";
}

} // namespace kibench
