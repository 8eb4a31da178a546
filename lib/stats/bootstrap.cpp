#include "lib/stats/bootstrap.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "lib/stats/random_index.hpp"
#include "lib/stats/select_median.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::stats {
namespace {

void check_series(std::span<const double> values, const char *which) {
  if (values.empty()) throw std::invalid_argument(std::string("bootstrap: empty ") + which + " series");
  for (const double v : values) {
    if (!(v > 0.0)) throw std::invalid_argument(std::string("bootstrap: non-positive latency in ") + which);
  }
}

void check_settings(const BootstrapSettings &settings) {
  if (settings.resamples < 1) throw std::invalid_argument("bootstrap: needs at least one resample");
  if (!(settings.confidence > 0.0 && settings.confidence < 1.0))
    throw std::invalid_argument("bootstrap: confidence must lie in (0, 1)");
}

double median_of(std::span<const double> values) {
  std::vector<double> scratch(values.begin(), values.end());
  return median_in_place(scratch);
}

// The percentile interval of the resampled statistics around `estimate`.
Interval percentile_interval(double estimate, std::vector<double> resampled, double confidence) {
  std::sort(resampled.begin(), resampled.end());
  const double tail = (1.0 - confidence) / 2.0;
  return Interval{estimate, quantile(resampled, tail), quantile(resampled, 1.0 - tail)};
}

// Collects both statistics per resample; `draw` fills the two scratch
// buffers with one resample and returns nothing.
template <typename Draw>
MedianComparison run_bootstrap(std::span<const double> baseline, std::span<const double> candidate,
                               const BootstrapSettings &settings, std::size_t baseline_size,
                               std::size_t candidate_size, Draw draw) {
  MedianComparison out;
  out.baseline_median = median_of(baseline);
  out.candidate_median = median_of(candidate);
  std::vector<double> differences(settings.resamples), speedups(settings.resamples);
  std::vector<double> baseline_draw(baseline_size), candidate_draw(candidate_size);
  RandomIndex random(settings.seed);
  for (std::size_t r = 0; r < settings.resamples; ++r) {
    draw(random, baseline_draw, candidate_draw);
    const double b = median_in_place(baseline_draw);
    const double c = median_in_place(candidate_draw);
    differences[r] = c - b;
    speedups[r] = b / c;
  }
  out.difference = percentile_interval(out.candidate_median - out.baseline_median, std::move(differences),
                                       settings.confidence);
  out.speedup = percentile_interval(out.baseline_median / out.candidate_median, std::move(speedups),
                                    settings.confidence);
  return out;
}

} // namespace

MedianComparison bootstrap_independent(std::span<const double> baseline, std::span<const double> candidate,
                                       const BootstrapSettings &settings) {
  check_series(baseline, "baseline");
  check_series(candidate, "candidate");
  check_settings(settings);
  return run_bootstrap(baseline, candidate, settings, baseline.size(), candidate.size(),
                       [&](RandomIndex &random, std::vector<double> &b, std::vector<double> &c) {
                         for (double &x : b) x = baseline[random.below(baseline.size())];
                         for (double &x : c) x = candidate[random.below(candidate.size())];
                       });
}

MedianComparison bootstrap_paired(std::span<const double> baseline, std::span<const double> candidate,
                                  const BootstrapSettings &settings) {
  check_series(baseline, "baseline");
  check_series(candidate, "candidate");
  check_settings(settings);
  if (baseline.size() != candidate.size())
    throw std::invalid_argument("bootstrap_paired: the two series must be equally long");
  const std::size_t n = baseline.size();
  return run_bootstrap(baseline, candidate, settings, n, n,
                       [&](RandomIndex &random, std::vector<double> &b, std::vector<double> &c) {
                         for (std::size_t i = 0; i < n; ++i) {
                           const std::size_t round = random.below(n);
                           b[i] = baseline[round];
                           c[i] = candidate[round];
                         }
                       });
}

} // namespace kibench::stats
