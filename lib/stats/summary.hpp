// Order statistics of timing samples. Quantiles use linear interpolation
// between closest ranks (numpy's default, "type 7"), so p20/p50/p80 agree
// with what triton.testing.do_bench and numpy.quantile report.
#pragma once

#include <span>
#include <vector>

namespace kibench::stats {

double quantile(std::span<const double> sorted, double q);
double median(std::vector<double> values);

struct Summary {
  std::size_t count = 0;
  double mean = 0, median = 0, minimum = 0, maximum = 0;
  double p05 = 0, p20 = 0, p80 = 0, p95 = 0;
  double mad = 0;            // median absolute deviation from the median (unscaled)
  double stdev = 0;          // sample standard deviation
  double ci95_low = 0;       // distribution-free 95 % confidence interval of the
  double ci95_high = 0;      // median from order statistics (binomial ranks)
  double relative_noise = 0; // 1.4826·MAD / median: a robust coefficient of variation
};

Summary summarize(std::vector<double> values);

} // namespace kibench::stats
