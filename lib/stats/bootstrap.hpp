// Percentile-bootstrap confidence intervals for the comparison of two
// latency series by their medians:
//
//   difference = median(candidate) - median(baseline)            (ns)
//   speedup    = median(baseline) / median(candidate)            (> 1: faster)
//
// Each resample redraws the data with replacement and recomputes both
// statistics; the interval is the (alpha/2, 1 - alpha/2) quantiles of the
// resampled values (alpha = 1 - confidence); the estimate is the statistic
// of the data itself.
//
// Independent series are redrawn separately (n_b from the baseline, n_c
// from the candidate). Paired series (element k of each taken in the same
// interleave round, so both saw the same machine state) are redrawn as
// pairs: one set of round indices serves both medians, so drift common to
// both rounds moves both medians together and cancels in the difference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace kibench::stats {

struct BootstrapSettings {
  std::size_t resamples = 5000;
  double confidence = 0.95;
  std::uint64_t seed = 1;
};

struct Interval {
  double estimate = 0.0;
  double low = 0.0;
  double high = 0.0;

  // True when the whole interval lies strictly on one side of `value`.
  [[nodiscard]] bool excludes(double value) const { return low > value || high < value; }
  [[nodiscard]] double width() const { return high - low; }
};

struct MedianComparison {
  Interval difference; // candidate - baseline, ns
  Interval speedup;    // baseline / candidate
  double baseline_median = 0.0;
  double candidate_median = 0.0;
};

// Every value must be positive (a latency); throws std::invalid_argument
// on an empty or non-positive series, or on fewer than 1 resample.
MedianComparison bootstrap_independent(std::span<const double> baseline, std::span<const double> candidate,
                                       const BootstrapSettings &settings);

// baseline[k] and candidate[k] are one pair; the spans must be equally long.
MedianComparison bootstrap_paired(std::span<const double> baseline, std::span<const double> candidate,
                                  const BootstrapSettings &settings);

} // namespace kibench::stats
