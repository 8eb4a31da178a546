// When to stop sampling one implementation (after NVBench's stdrel
// criterion): enough samples, enough time, and a median known precisely
// enough; or a hard cap on samples or on the implementation's own wall
// time. The time limit counts the wall time of the implementation's own
// samples (flush, untimed work, the timed run and its check), not the time
// since the group began: in shared rounds a fast lane beside a slow one
// would otherwise stop with the slow lane's handful of samples.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lib/harness/protocol_settings.hpp"

namespace kibench {

// The median's standard error is about sqrt(pi/2)·sigma/sqrt(n) for normal
// data.
inline constexpr double kMedianStandardErrorFactor = 1.2533;

// The relative standard error of the median of `count` samples whose
// robust relative spread (1.4826·MAD / median) is `relative_spread`:
// kMedianStandardErrorFactor·spread/sqrt(n), infinite below two samples.
// What --max-noise bounds.
double median_relative_standard_error(double relative_spread, std::size_t count);

class StoppingRule {
public:
  explicit StoppingRule(const ProtocolSettings &settings);
  // One sample of `ns` timed nanoseconds that took `wall_s` seconds of
  // wall time to take.
  void add_sample(double ns, double wall_s);
  [[nodiscard]] bool finished() const;
  // Why it stopped: "noise_target", "max_samples" or "timeout".
  [[nodiscard]] std::string reason() const;
  // At the sample cap or past the time limit: no sample more, whatever
  // other implementations still need.
  [[nodiscard]] bool at_cap() const;
  // Current relative standard error of the median (robust); infinite
  // below two samples.
  [[nodiscard]] double relative_error() const;
  // 1.4826·MAD / median of the samples so far; infinite below two.
  [[nodiscard]] double relative_spread() const;
  [[nodiscard]] std::size_t samples() const { return samples_.size(); }
  // Seconds of samples so far (what --min-time counts).
  [[nodiscard]] double sampled_s() const { return sampled_ns_ * 1e-9; }
  // Wall seconds spent taking them (what --timeout counts).
  [[nodiscard]] double wall_s() const { return wall_s_; }

private:
  ProtocolSettings settings_;
  std::vector<double> samples_;
  double sampled_ns_ = 0.0;
  double wall_s_ = 0.0;
  [[nodiscard]] bool past_time_limit() const;
  // relative_spread() of the current samples, computed once per sample:
  // the rule and the progress report both ask after every sample.
  mutable std::optional<double> spread_;
};

} // namespace kibench
