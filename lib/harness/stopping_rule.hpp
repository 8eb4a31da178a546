// When to stop sampling one implementation (after NVBench's stdrel
// criterion): enough samples, enough time, and a median known precisely
// enough; or a hard cap on samples or wall time.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "lib/harness/protocol_settings.hpp"

namespace kibench {

class StoppingRule {
public:
  explicit StoppingRule(const ProtocolSettings &settings);
  void add_sample(double ns);
  [[nodiscard]] bool finished() const;
  // Why it stopped: "noise_target", "max_samples" or "timeout".
  [[nodiscard]] std::string reason() const;
  // At the sample cap or past the time limit: no sample more, whatever
  // other implementations still need.
  [[nodiscard]] bool at_cap() const;
  // Current relative standard error of the median (robust).
  [[nodiscard]] double relative_error() const;

private:
  ProtocolSettings settings_;
  std::vector<double> samples_;
  double sampled_ns_ = 0.0;
  std::chrono::steady_clock::time_point started_;
};

} // namespace kibench
