#include "lib/stats/noise_floor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "lib/stats/summary.hpp"

namespace kibench::stats {

double relative_noise(std::span<const double> values) {
  return summarize(std::vector<double>(values.begin(), values.end())).relative_noise;
}

double independent_noise_floor(std::span<const double> baseline, std::span<const double> candidate) {
  return std::max(relative_noise(baseline), relative_noise(candidate));
}

double paired_noise_floor(std::span<const double> baseline, std::span<const double> candidate) {
  if (baseline.size() != candidate.size())
    throw std::invalid_argument("paired_noise_floor: the two series must be equally long");
  std::vector<double> ratios(baseline.size());
  for (std::size_t k = 0; k < baseline.size(); ++k) ratios[k] = candidate[k] / baseline[k];
  return relative_noise(ratios) / std::sqrt(2.0);
}

} // namespace kibench::stats
