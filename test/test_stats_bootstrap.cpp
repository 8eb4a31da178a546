// The statistics under `kibench compare`: median by selection, unbiased
// resampling indices, percentile bootstrap intervals, noise floors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/stats/bootstrap.hpp"
#include "lib/stats/noise_floor.hpp"
#include "lib/stats/random_index.hpp"
#include "lib/stats/select_median.hpp"
#include "lib/stats/summary.hpp"
#include "test/test_compare_support.hpp"

using kibench::stats::BootstrapSettings;
using namespace kibench::test;

TEST_CASE("median by selection equals the interpolated median for odd and even sizes", "[stats][bootstrap]") {
  Normal normal(7);
  for (std::size_t n = 1; n <= 40; ++n) {
    std::vector<double> values = noisy_series(n, 100.0, 0.3, normal);
    const double expected = kibench::stats::median(values);
    CHECK(kibench::stats::median_in_place(values) == Approx(expected).epsilon(1e-15));
  }
  std::vector<double> even{4.0, 1.0, 3.0, 2.0};
  CHECK(kibench::stats::median_in_place(even) == 2.5);
  std::vector<double> none;
  CHECK_THROWS_AS(kibench::stats::median_in_place(none), std::invalid_argument);
}

TEST_CASE("random indices are reproducible, in range and uniform", "[stats][bootstrap]") {
  kibench::stats::RandomIndex a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const std::size_t x = a.below(7);
    REQUIRE(x < 7);
    CHECK(x == b.below(7));
    differs = differs || x != c.below(7);
  }
  CHECK(differs);
  // Uniformity: 7000 draws over 7 residues per seed give a chi-square with
  // 6 degrees of freedom (mean 6, variance 12); over 200 seeds its mean has
  // a standard deviation of sqrt(12/200) = 0.245, so a fair draw lands in
  // [5, 7] (four standard deviations) and a biased one drifts far above.
  double chi_square_sum = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    kibench::stats::RandomIndex random(seed);
    std::vector<double> counts(7, 0.0);
    for (int i = 0; i < 7000; ++i) counts[random.below(7)] += 1;
    for (const double count : counts) chi_square_sum += (count - 1000.0) * (count - 1000.0) / 1000.0;
  }
  const double mean_chi_square = chi_square_sum / 200;
  CHECK(mean_chi_square > 5.0);
  CHECK(mean_chi_square < 7.0);
  CHECK(kibench::stats::derive_seed(1, "a|b") != kibench::stats::derive_seed(1, "b|a"));
  CHECK(kibench::stats::derive_seed(1, "a|b") == kibench::stats::derive_seed(1, "a|b"));
}

TEST_CASE("bootstrap intervals bracket the estimate and are reproducible from the seed",
          "[stats][bootstrap]") {
  Normal normal(11);
  const auto baseline = noisy_series(80, 1000.0, 0.02, normal);
  const auto candidate = noisy_series(80, 1050.0, 0.02, normal);
  BootstrapSettings settings;
  settings.resamples = 2000;
  const auto first = kibench::stats::bootstrap_independent(baseline, candidate, settings);
  const auto again = kibench::stats::bootstrap_independent(baseline, candidate, settings);
  CHECK(first.difference.low == again.difference.low);
  CHECK(first.difference.high == again.difference.high);
  settings.seed = 2;
  const auto other = kibench::stats::bootstrap_independent(baseline, candidate, settings);
  CHECK(other.difference.low != first.difference.low);

  CHECK(first.difference.estimate ==
        Approx(kibench::stats::median(candidate) - kibench::stats::median(baseline)));
  CHECK(first.speedup.estimate ==
        Approx(kibench::stats::median(baseline) / kibench::stats::median(candidate)));
  CHECK(first.difference.low <= first.difference.estimate);
  CHECK(first.difference.estimate <= first.difference.high);
  CHECK(first.speedup.low <= first.speedup.estimate);
  CHECK(first.speedup.estimate <= first.speedup.high);
  // A 5 % shift against 2 % noise on 80 samples: far outside the interval.
  CHECK(first.difference.excludes(0.0));
  CHECK(first.speedup.high < 1.0);
}

TEST_CASE("bootstrap rejects what is not a pair of latency series", "[stats][bootstrap]") {
  const std::vector<double> ok{1.0, 2.0, 3.0};
  const std::vector<double> empty;
  const std::vector<double> zero{1.0, 0.0, 3.0};
  const std::vector<double> shorter{1.0, 2.0};
  BootstrapSettings settings;
  CHECK_THROWS_AS(kibench::stats::bootstrap_independent(ok, empty, settings), std::invalid_argument);
  CHECK_THROWS_AS(kibench::stats::bootstrap_independent(zero, ok, settings), std::invalid_argument);
  CHECK_THROWS_AS(kibench::stats::bootstrap_paired(ok, shorter, settings), std::invalid_argument);
  settings.resamples = 0;
  CHECK_THROWS_AS(kibench::stats::bootstrap_paired(ok, ok, settings), std::invalid_argument);
}

TEST_CASE("a 95 % interval of identical distributions excludes zero about 5 % of the time",
          "[stats][bootstrap]") {
  // Coverage check over 200 independent data sets: the count of intervals
  // excluding zero is Binomial(200, ~0.05) for a calibrated interval (mean
  // 10, sd 3.1); more than 22 would mean the interval is far too narrow.
  BootstrapSettings settings;
  settings.resamples = 1000;
  int excluded = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Normal normal(1000 + seed);
    const auto a = noisy_series(60, 1000.0, 0.01, normal);
    const auto b = noisy_series(60, 1000.0, 0.01, normal);
    settings.seed = seed;
    excluded += kibench::stats::bootstrap_independent(a, b, settings).difference.excludes(0.0) ? 1 : 0;
  }
  INFO("intervals excluding zero: " << excluded << " of 200");
  CHECK(excluded <= 22);
}

TEST_CASE("noise floors: relative MAD noise, and paired noise with shared drift divided out",
          "[stats][noise]") {
  Normal normal(5);
  const auto series = noisy_series(2000, 1000.0, 0.01, normal);
  // 1.4826·MAD/median estimates the relative standard deviation.
  CHECK(kibench::stats::relative_noise(series) == Approx(0.01).epsilon(0.1));

  std::vector<double> drift(2000);
  for (auto &d : drift) d = 1.0 + 0.05 * normal();
  const auto b = noisy_series(2000, 1000.0, 0.002, normal, drift);
  const auto c = noisy_series(2000, 1010.0, 0.002, normal, drift);
  // Each series alone is as noisy as its drift (5 %); their per-round
  // ratio only carries the 0.2 % sample noise.
  CHECK(kibench::stats::independent_noise_floor(b, c) > 0.04);
  CHECK(kibench::stats::paired_noise_floor(b, c) == Approx(0.002).epsilon(0.15));
}
