#include "lib/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kibench::stats {

double quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of no samples");
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile(values, 0.5);
}

namespace {

// Ranks (0-based) of the order statistics bracketing the median with at
// least 95 % coverage: the median of n samples lies between X(j) and X(k)
// with probability P(j < B < k), B ~ Binomial(n, 1/2); normal approximation
// with continuity correction, clamped to the sample.
std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n) {
  const double half_width = 1.959963984540054 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double centre = static_cast<double>(n) / 2.0;
  const auto low = static_cast<long long>(std::floor(centre - half_width - 0.5));
  const auto high = static_cast<long long>(std::ceil(centre + half_width + 0.5)) - 1;
  const auto last = static_cast<long long>(n) - 1;
  return {static_cast<std::size_t>(std::clamp(low, 0LL, last)),
          static_cast<std::size_t>(std::clamp(high, 0LL, last))};
}

} // namespace

Summary summarize(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("summary of no samples");
  std::sort(values.begin(), values.end());
  Summary s;
  s.count = values.size();
  s.minimum = values.front();
  s.maximum = values.back();
  s.median = quantile(values, 0.5);
  s.p05 = quantile(values, 0.05);
  s.p20 = quantile(values, 0.20);
  s.p80 = quantile(values, 0.80);
  s.p95 = quantile(values, 0.95);
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.count);
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.stdev = s.count > 1 ? std::sqrt(squares / static_cast<double>(s.count - 1)) : 0.0;
  std::vector<double> deviations(values.size());
  std::transform(values.begin(), values.end(), deviations.begin(),
                 [&](double v) { return std::fabs(v - s.median); });
  s.mad = median(std::move(deviations));
  const auto [low, high] = median_ci_ranks(s.count);
  s.ci95_low = values[low];
  s.ci95_high = values[high];
  s.relative_noise = s.median > 0 ? 1.4826 * s.mad / s.median : 0.0;
  return s;
}

} // namespace kibench::stats
