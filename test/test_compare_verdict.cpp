// Verdicts and ranks on synthetic samples: what `kibench compare` claims
// must hold statistically, not just on one lucky draw.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "lib/compare/compare.hpp"
#include "lib/compare/pair_comparison.hpp"
#include "lib/compare/protocol_terms.hpp"
#include "lib/compare/ranking.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "test/test_compare_support.hpp"

using kibench::compare::compare_pair;
using kibench::compare::Pairing;
using kibench::compare::Verdict;
using namespace kibench::test;

namespace {

kibench::stats::BootstrapSettings bootstrap(std::uint64_t seed, std::size_t resamples = 1000) {
  kibench::stats::BootstrapSettings settings;
  settings.seed = seed;
  settings.resamples = resamples;
  return settings;
}

// Per-round drift shared by every series of one invocation: slow waves plus
// jitter, 5 % in all: the machine state both implementations saw.
std::vector<double> shared_drift(std::size_t n, Normal &normal) {
  std::vector<double> drift(n);
  for (std::size_t k = 0; k < n; ++k)
    drift[k] = 1.0 + 0.04 * std::sin(0.7 * static_cast<double>(k)) + 0.03 * normal();
  return drift;
}

} // namespace

TEST_CASE("identical distributions share a rank in at least 95 % of 200 seeds", "[compare][statistics]") {
  for (const bool paired : {false, true}) {
    int shared = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      Normal normal(seed);
      const auto b = noisy_series(100, 1000.0, 0.01, normal);
      const auto c = noisy_series(100, 1000.0, 0.01, normal);
      const auto baseline = synthetic_run("a", b, "one");
      const auto candidate = synthetic_run("b", c, paired ? "one" : "two");
      const auto result = compare_pair(baseline, candidate, bootstrap(seed));
      CHECK(result.pairing == (paired ? Pairing::paired : Pairing::independent));
      shared += result.verdict == Verdict::shared ? 1 : 0;
    }
    INFO((paired ? "paired" : "independent") << ": shared in " << shared << " of 200");
    CHECK(shared >= 190);
  }
}

TEST_CASE("a 3 % shift with 1 % noise is a strict winner (and the other way a strict loser)",
          "[compare][statistics]") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Normal normal(500 + seed);
    const auto b = noisy_series(50, 1000.0, 0.01, normal);
    const auto faster = noisy_series(50, 970.0, 0.01, normal);
    const auto slower = noisy_series(50, 1030.0, 0.01, normal);
    const auto baseline = synthetic_run("baseline", b, "one");
    const auto win = compare_pair(baseline, synthetic_run("fast", faster, "two"), bootstrap(seed));
    const auto loss = compare_pair(baseline, synthetic_run("slow", slower, "three"), bootstrap(seed));
    CHECK(win.verdict == Verdict::faster);
    CHECK(win.significant());
    CHECK(win.relative_effect == Approx(-0.03).margin(0.01));
    CHECK(win.medians.speedup.low > 1.0);
    CHECK(loss.verdict == Verdict::slower);
    CHECK(loss.medians.speedup.high < 1.0);
  }
}

TEST_CASE("pairing by interleave round cancels shared drift that hides a 1 % effect",
          "[compare][statistics]") {
  int paired_detects = 0, independent_detects = 0, paired_narrower = 0;
  const int seeds = 20;
  for (int seed = 0; seed < seeds; ++seed) {
    Normal normal(900 + static_cast<std::uint64_t>(seed));
    const auto drift = shared_drift(60, normal);
    const auto b = noisy_series(60, 1000.0, 0.002, normal, drift);
    const auto c = noisy_series(60, 1010.0, 0.002, normal, drift);
    // The same samples, read as one interleaved invocation and as two.
    const double minimum_effect = 0.005;
    const auto paired = compare_pair(synthetic_run("b", b, "one", minimum_effect),
                                     synthetic_run("c", c, "one", minimum_effect),
                                     bootstrap(static_cast<std::uint64_t>(seed)));
    const auto independent = compare_pair(synthetic_run("b", b, "one", minimum_effect),
                                          synthetic_run("c", c, "two", minimum_effect),
                                          bootstrap(static_cast<std::uint64_t>(seed)));
    REQUIRE(paired.pairing == Pairing::paired);
    REQUIRE(independent.pairing == Pairing::independent);
    paired_narrower += paired.medians.difference.width() < independent.medians.difference.width() / 4 ? 1 : 0;
    paired_detects += paired.significant() && paired.medians.difference.low > 0 ? 1 : 0;
    independent_detects += independent.significant() ? 1 : 0;
    // The drift-free noise floor lets the paired comparison call it; the
    // independent one sees 5 % noise and must not.
    CHECK(paired.verdict == Verdict::slower);
    CHECK(independent.verdict == Verdict::shared);
  }
  CHECK(paired_narrower == seeds);
  CHECK(paired_detects == seeds);
  CHECK(independent_detects <= seeds / 2);
}

TEST_CASE("pairs are matched by round number, not by position in the file", "[compare][statistics]") {
  Normal normal(77);
  const auto drift = shared_drift(40, normal);
  const auto b = noisy_series(40, 1000.0, 0.002, normal, drift);
  const auto c = noisy_series(40, 1010.0, 0.002, normal, drift);
  const auto baseline = synthetic_run("b", b, "one");
  auto in_order = synthetic_run("c", c, "one");
  auto reversed = in_order;
  std::reverse(reversed.raw->samples.begin(), reversed.raw->samples.end());
  const auto ordered_result = compare_pair(baseline, in_order, bootstrap(3));
  const auto reversed_result = compare_pair(baseline, reversed, bootstrap(3));
  CHECK(reversed_result.pairing == Pairing::paired);
  CHECK(reversed_result.medians.difference.estimate == Approx(ordered_result.medians.difference.estimate));
  CHECK(reversed_result.medians.difference.width() < 0.01 * 1000.0);

  // Rounds the other run never sampled are left out of the pairs.
  auto partial = in_order;
  partial.raw->samples.resize(25);
  CHECK(compare_pair(baseline, partial, bootstrap(3)).baseline_samples == 25);
}

TEST_CASE("no pairing across invocations, without interleaving, or with too few common rounds",
          "[compare][statistics]") {
  Normal normal(3);
  const auto b = noisy_series(30, 1000.0, 0.01, normal);
  const auto c = noisy_series(30, 1000.0, 0.01, normal);
  auto baseline = synthetic_run("b", b, "one");
  auto candidate = synthetic_run("c", c, "one");
  const auto fixed = compare_pair(baseline, candidate, bootstrap(1));
  CHECK(fixed.pairing == Pairing::paired);
  // Paired either way; the note says whether the rounds kept one order.
  CHECK(fixed.fixed_order);
  CHECK_THAT(fixed.pairing_note, Catch::Matchers::Contains("fixed order"));
  baseline.rotated_order = candidate.rotated_order = true;
  const auto rotated = compare_pair(baseline, candidate, bootstrap(1));
  CHECK(rotated.pairing == Pairing::paired);
  CHECK_FALSE(rotated.fixed_order);
  CHECK_THAT(rotated.pairing_note, !Catch::Matchers::Contains("fixed order"));
  CHECK(rotated.medians.difference.estimate == fixed.medians.difference.estimate);

  baseline.interleaved = candidate.interleaved = false;
  const auto sequential = compare_pair(baseline, candidate, bootstrap(1));
  CHECK(sequential.pairing == Pairing::independent);
  CHECK_THAT(sequential.pairing_note, Catch::Matchers::Contains("did not interleave"));

  baseline.interleaved = candidate.interleaved = true;
  for (std::size_t k = 0; k < candidate.raw->samples.size(); ++k) candidate.raw->samples[k].round = 100 + k;
  const auto disjoint = compare_pair(baseline, candidate, bootstrap(1));
  CHECK(disjoint.pairing == Pairing::independent);
  CHECK_THAT(disjoint.pairing_note, Catch::Matchers::Contains("rounds in common"));
}

TEST_CASE("too few samples give no verdict, however large the effect", "[compare][statistics]") {
  const auto baseline = synthetic_run("b", {1000, 1001, 999, 1000}, "one");
  const auto candidate = synthetic_run("c", {2000, 2001, 1999, 2000}, "two");
  const auto result = compare_pair(baseline, candidate, bootstrap(1));
  CHECK(result.verdict == Verdict::shared);
  CHECK_THAT(result.explanation, Catch::Matchers::Contains("too few samples"));
}

TEST_CASE("ranks: strict where a difference is significant, shared otherwise, tiers led by the fastest",
          "[compare][ranking]") {
  // Medians 1000, 1002, 1008, 1016, 1024, 1100 at 0.1 % noise: steps of
  // 0.8 % are each below the 1 % minimum effect, but 1016 is 1.6 % behind
  // the leader 1000 and starts a tier; 1024 is 0.8 % behind 1016 and shares
  // it; 1100 is far behind both.
  const std::vector<double> medians{1016, 1000, 1100, 1002, 1024, 1008};
  std::vector<kibench::compare::ComparedRun> runs;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    runs.push_back(synthetic_run("r" + std::to_string(static_cast<int>(medians[i])),
                                 kibench::test::quiet_samples(medians[i], 40 + i, 60, 0.001), "one"));
  }
  const auto ranking =
      kibench::compare::rank_members(runs, {0, 1, 2, 3, 4, 5}, [&](std::size_t b, std::size_t c) {
        return compare_pair(runs[b], runs[c], bootstrap(9)).verdict == Verdict::slower;
      });
  std::map<std::string, std::size_t> rank;
  for (const auto &entry : ranking) rank[runs[entry.run].id] = entry.rank;
  CHECK(rank["r1000"] == 1);
  CHECK(rank["r1002"] == 1);
  CHECK(rank["r1008"] == 1);
  CHECK(rank["r1016"] == 4);
  CHECK(rank["r1024"] == 4);
  CHECK(rank["r1100"] == 6);
  CHECK(runs[ranking.front().run].id == "r1000");
  for (const auto &entry : ranking) {
    if (entry.rank == 1) CHECK(runs[entry.tier_leader].id == "r1000");
    if (entry.rank == 4) CHECK(runs[entry.tier_leader].id == "r1016");
  }
}

TEST_CASE("the minimum effect is read from the protocol's notes", "[compare][protocol]") {
  using kibench::compare::minimum_effect_in;
  kibench::ProtocolSettings settings;
  settings.timer = "steady_clock";
  settings.minimum_effect = 0.02;
  CHECK(minimum_effect_in(settings.describe()) == Approx(0.02));
  CHECK(minimum_effect_in("Differences below a minimum effect of 2.5 % are noise.") == Approx(0.025));
  CHECK(minimum_effect_in("minimum effect: 0.5%") == Approx(0.005));
  CHECK_FALSE(minimum_effect_in("Timed: the module forward pass, via triton.testing.do_bench.").has_value());

  CHECK(kibench::compare::states_interleaving(settings.describe()));
  CHECK(kibench::compare::states_rotated_order(settings.describe()));
  // kibench's notes before the rounds were rotated, and other harnesses'.
  CHECK_FALSE(kibench::compare::states_rotated_order(
      "Samples of several implementations are interleaved round by round: yes. Samples whose SM clock"));
  settings.interleave = false;
  CHECK_FALSE(kibench::compare::states_interleaving(settings.describe()));
  CHECK_FALSE(kibench::compare::states_rotated_order(settings.describe()));
}

TEST_CASE("latencies are integer nanoseconds or strings with a unit", "[compare][protocol]") {
  using kibench::compare::latency_ns;
  CHECK(latency_ns(kibench::json::Value(213159866)) == Approx(213159866));
  CHECK(latency_ns(kibench::json::Value("213.2ms")) == Approx(213.2e6));
  CHECK(latency_ns(kibench::json::Value("1.5 µs")) == Approx(1500));
  CHECK(latency_ns(kibench::json::Value("2 s")) == Approx(2e9));
  CHECK_FALSE(latency_ns(kibench::json::Value("fast")).has_value());
  CHECK_FALSE(latency_ns(kibench::json::Value(-1)).has_value());
}

TEST_CASE("paired speedups that the medians beside them contradict carry a caveat with clocks and power",
          "[compare][statistics]") {
  // The power limiter's pattern: while the slow lane (eager, 10 rounds)
  // was sampled, the fast lane ran boosted (1875 MHz, 5 % faster); in its
  // 40 rounds after, it ran at the cap (1480 MHz). Paired on the first 10
  // rounds the speedup is ~5 % above the ratio of the medians.
  Normal normal(7);
  std::vector<double> eager = noisy_series(10, 178e6, 0.002, normal);
  std::vector<double> fused = noisy_series(50, 34.7e6, 0.002, normal);
  for (std::size_t k = 0; k < 10; ++k) fused[k] *= 0.95;
  auto baseline = synthetic_run("eager", eager, "one");
  auto candidate = synthetic_run("fused", fused, "one");
  for (auto &s : baseline.raw->samples) {
    s.clock_mhz = 1900.0;
    s.power_w = 420.0;
  }
  for (auto &s : candidate.raw->samples) {
    s.clock_mhz = s.round < 10 ? 1875.0 : 1480.0;
    s.power_w = s.round < 10 ? 600.0 : 690.0;
  }
  const auto result = compare_pair(baseline, candidate, bootstrap(3));
  REQUIRE(result.pairing == Pairing::paired);
  REQUIRE(result.all_samples_speedup.has_value());
  CHECK(*result.all_samples_speedup == Approx(178.0 / 34.7).epsilon(0.01));
  CHECK(result.medians.speedup.estimate > *result.all_samples_speedup * 1.03);
  CHECK_THAT(result.state_caveat, Catch::Contains("10 shared rounds"));
  CHECK_THAT(result.state_caveat, Catch::Contains("fused 1875 MHz in the shared rounds, 1480 overall"));
  CHECK_THAT(result.state_caveat, Catch::Contains("fused 600 W in the shared rounds, 690 overall"));

  // Every lane in every round: the two estimates agree, no caveat.
  std::vector<double> eager_all = noisy_series(50, 178e6, 0.002, normal);
  std::vector<double> fused_all = noisy_series(50, 34.7e6, 0.002, normal);
  const auto agreed = compare_pair(synthetic_run("eager", eager_all, "two"),
                                   synthetic_run("fused", fused_all, "two"), bootstrap(3));
  REQUIRE(agreed.all_samples_speedup.has_value());
  CHECK(agreed.state_caveat.empty());
}
