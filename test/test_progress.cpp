// Live progress of `kibench run`: the time left follows the stopping
// rule's state (the samples the noise target needs at the spread measured,
// the caps), never "~0 s" while work remains; the line shows the workload
// of how many, the implementation, samples, noise and that estimate, cut
// to a terminal's width; a log gets a line per phase and one every few
// seconds while sampling.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lib/harness/stopping_rule.hpp"
#include "lib/harness/time_left.hpp"
#include "lib/run/progress_line.hpp"

using namespace kibench;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

ProtocolSettings settings_of(std::size_t min_samples, std::size_t max_samples, double max_noise) {
  ProtocolSettings s;
  s.min_samples = min_samples;
  s.max_samples = max_samples;
  s.min_time_s = 0.0;
  s.max_noise = max_noise;
  s.timeout_s = 3600.0;
  return s;
}

// `samples` samples of 10 ms each, taking 12 ms of wall time each, with
// the given relative spread.
LaneProgress lane(std::size_t samples, double spread) {
  LaneProgress l;
  l.samples = samples;
  l.sampled_s = 0.010 * static_cast<double>(samples);
  l.wall_s = 0.012 * static_cast<double>(samples);
  l.relative_spread = spread;
  return l;
}

} // namespace

TEST_CASE("samples_needed: the noise target at the spread measured, within the caps", "[progress][eta]") {
  const ProtocolSettings s = settings_of(10, 1000, 0.005);
  // Spread 5 %: n >= (1.2533 * 0.05 / 0.005)^2 = 157.08, so 158 samples.
  CHECK(samples_needed(lane(20, 0.05), s) == 158);
  CHECK(median_relative_standard_error(0.05, 158) <= 0.005);
  CHECK(median_relative_standard_error(0.05, 157) > 0.005);
  // Spread 20 %: 2514 samples would be needed; the cap is 1000.
  CHECK(samples_needed(lane(881, 0.20), s) == 1000);
  // Below the minimum, at least the minimum; before two samples, no spread yet.
  CHECK(samples_needed(lane(3, 0.001), s) == 10);
  CHECK(samples_needed(lane(1, std::numeric_limits<double>::infinity()), s) == 10);
  // Always one more while the rule wants samples, and none once it is met.
  CHECK(samples_needed(lane(40, 0.001), s) == 41);
  LaneProgress met = lane(40, 0.001);
  met.rule_met = true;
  CHECK(samples_needed(met, s) == 40);
  // --min-time: 0.5 s of 10 ms samples is 50 of them.
  ProtocolSettings timed = s;
  timed.min_time_s = 0.5;
  CHECK(samples_needed(lane(20, 0.001), timed) == 50);
}

// The report that started this: 881 samples of 1000 taken, the noise above
// its target, and the line said "~0 s left".
TEST_CASE("time left at sample 881 of 1000 counts the 119 still to come", "[progress][eta]") {
  const ProtocolSettings s = settings_of(10, 1000, 0.005);
  const auto left = time_left_s({lane(881, 0.20)}, s);
  REQUIRE(left);
  CHECK(*left == Approx(119 * 0.012));
  CHECK(time_left_text(*left) == "~2 s left");
}

TEST_CASE("time left: every lane's samples at its own pace, the time limit, the sustained phase",
          "[progress][eta]") {
  const ProtocolSettings s = settings_of(10, 1000, 0.005);
  // Nothing sampled yet: nothing to scale by.
  CHECK_FALSE(time_left_s({lane(0, 0.0)}, s).has_value());

  // Interleaved lanes take their samples one after another: 138 more at
  // 12 ms, and 9 more at 12 ms (the minimum of 10, one taken).
  LaneProgress fast = lane(1, std::numeric_limits<double>::infinity());
  const auto both = time_left_s({lane(20, 0.05), fast}, s);
  REQUIRE(both);
  CHECK(*both == Approx((138 + 9) * 0.012));

  // A lane without samples yet is timed at the others' pace.
  const auto unstarted = time_left_s({lane(20, 0.05), lane(0, 0.0)}, s);
  REQUIRE(unstarted);
  CHECK(*unstarted == Approx((138 + 10) * 0.012));

  // Every rule stops once its own samples have taken --timeout of wall
  // time, whatever the noise wants. 881 samples have taken 10.572 s: with a
  // 13 s limit the 119 still wanted (1.4 s) fit in the 2.4 s left.
  ProtocolSettings limited = s;
  limited.timeout_s = 13.0;
  const auto capped = time_left_s({lane(881, 0.20)}, limited);
  REQUIRE(capped);
  CHECK(*capped == Approx(119 * 0.012).margin(1e-9));
  // 100 samples have taken 1.2 s of a 1.7 s limit: 0.5 s left, not the
  // 900 samples' 10.8 s.
  limited.timeout_s = 1.7;
  const auto near_limit = time_left_s({lane(100, 0.20)}, limited);
  REQUIRE(near_limit);
  CHECK(*near_limit == Approx(0.5));
  // Each lane's limit is its own: beside a lane that has used 10.572 s
  // of a 13 s limit, one that has used 1.2 s still takes its 900.
  limited.timeout_s = 13.0;
  const auto neighbours = time_left_s({lane(881, 0.20), lane(100, 0.20)}, limited);
  REQUIRE(neighbours);
  CHECK(*neighbours == Approx(119 * 0.012 + 900 * 0.012));
  LaneProgress used_up = lane(881, 0.20);
  used_up.wall_s = 13.0;
  const auto one_used_up = time_left_s({used_up, lane(100, 0.20)}, limited);
  REQUIRE(one_used_up);
  CHECK(*one_used_up == Approx(900 * 0.012));

  // A lane at its cap takes nothing more; the sustained phase still counts.
  LaneProgress done = lane(1000, 0.20);
  done.at_cap = true;
  done.rule_met = true;
  done.sustained_s = 1.25;
  const auto sustained = time_left_s({done}, s);
  REQUIRE(sustained);
  CHECK(*sustained == Approx(1.25));
}

TEST_CASE("the time limit (--timeout) counts the wall time of the implementation's own samples",
          "[progress][stopping]") {
  ProtocolSettings s = settings_of(10, 1000, 0.005);
  s.timeout_s = 1.0;
  StoppingRule rule(s);
  CHECK_FALSE(rule.at_cap());
  // Samples of 1 ms timed, each taking 0.3 s of wall time (a check beside it).
  for (int k = 0; k < 3; ++k) rule.add_sample(1e6, 0.3);
  CHECK(rule.wall_s() == Approx(0.9));
  CHECK_FALSE(rule.at_cap());
  CHECK(rule.reason().empty());
  rule.add_sample(1e6, 0.3);
  CHECK(rule.at_cap());
  CHECK(rule.reason() == "timeout");
  // The time since the rule was made does not count: a rule whose samples
  // are quick is not stopped by a slow neighbour's rounds.
  StoppingRule quick(s);
  quick.add_sample(1e6, 0.001);
  CHECK_FALSE(quick.at_cap());
}

TEST_CASE("time left with shared rounds: every lane samples as long as the neediest", "[progress][eta]") {
  ProtocolSettings s = settings_of(10, 1000, 0.005);
  s.share_rounds = true;
  LaneProgress quiet = lane(20, 0.001);
  quiet.rule_met = true; // its own rule is met, but it keeps sampling
  const auto left = time_left_s({lane(20, 0.05), quiet}, s);
  REQUIRE(left);
  CHECK(*left == Approx(2 * 138 * 0.012));
}

TEST_CASE("time left reads never \"~0 s\"", "[progress][eta]") {
  CHECK(time_left_text(0.0) == "<1 s left");
  CHECK(time_left_text(0.4) == "<1 s left");
  CHECK(time_left_text(1.0) == "~1 s left");
  CHECK(time_left_text(14.2) == "~15 s left");
  CHECK(time_left_text(150.0) == "~3 min left");
  CHECK(time_left_text(7500.0) == "~2 h 5 min left");
}

TEST_CASE("the progress line: workload of how many, implementation, samples, noise, time left",
          "[progress][line]") {
  Progress p;
  p.workload_index = 1;
  p.workload_count = 3;
  p.workload = "distill-jsd-loss-hidden4096-tokens8192-vocab128256-bf16";
  p.implementation = "fused";
  p.sample = 412;
  p.samples_expected = 860;
  p.max_samples = 1000;
  p.noise = 0.0062;
  p.noise_target = 0.005;
  p.estimated_left_s = 13.2;
  CHECK(progress_line(p) ==
        "[2/3] distill-jsd-loss-hidden4096-tokens8192-vocab128256-bf16 · fused · 412/~860 "
        "samples · noise 0.62 % → 0.50 % · ~14 s left");
  p.samples_expected = 1000; // the noise target is out of reach: the cap decides
  CHECK_THAT(progress_line(p), Contains("412/1000 (cap) samples"));

  // Cut to a terminal's width: the workload name gives way in its middle.
  const std::string narrow = progress_line(p, 80);
  CHECK_THAT(narrow, StartsWith("[2/3] distill-…"));
  CHECK_THAT(narrow, Contains("-bf16 · fused · 412/1000 (cap) samples"));
  std::size_t columns = 0;
  for (const char c : narrow) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  CHECK(columns <= 80);
  CHECK(progress_line(p, 20).size() <= 3 * 20);

  p.phase = Phase::lane_done;
  p.sample = 1000;
  p.stop_reason = "max_samples";
  p.estimated_left_s = 0.2;
  CHECK_THAT(progress_line(p),
             Contains("· fused · done: 1000 samples, noise 0.62 % (stopped at the sample cap) · "
                      "<1 s left"));
  // With shared rounds a lane whose rule is met samples on: the line says
  // so rather than counting on past its "done".
  p.phase = Phase::sampling;
  p.rule_met_at = 218;
  p.sample = 824;
  p.estimated_left_s = 3.0;
  CHECK_THAT(progress_line(p),
             Contains("· fused · 824 samples · its rule met at 218; sampling on in the rounds the others need · "
                      "~3 s left"));
  p.rule_met_at = 0;
  p.phase = Phase::oracle;
  p.implementation = "cpu-fp64";
  p.estimated_left_s.reset();
  CHECK_THAT(progress_line(p), Contains("· cpu-fp64 · computing the oracle's answer"));
  // Names from files are shown escaped.
  p.implementation = "evil\x1b[31m";
  CHECK_THAT(progress_line(p), Contains("evil\\x1b[31m"));
}

TEST_CASE("a log gets each phase, each workload's first sample, then a sample every few seconds",
          "[progress][line]") {
  ProgressLog log(5.0);
  Progress p;
  p.phase = Phase::oracle;
  CHECK(log.wants(p, 0.0));
  p.phase = Phase::sampling;
  CHECK(log.wants(p, 0.1)); // the first sample of workload 1
  CHECK_FALSE(log.wants(p, 2.0));
  CHECK_FALSE(log.wants(p, 5.0));
  CHECK(log.wants(p, 5.2));
  p.phase = Phase::lane_done;
  CHECK(log.wants(p, 5.3));
  // A new workload's first sample is shown at once, although the clock
  // restarted for its timing.
  p.workload_index = 1;
  p.phase = Phase::sampling;
  CHECK(log.wants(p, 5.4));
  CHECK_FALSE(log.wants(p, 6.0));
  CHECK(log.wants(p, 10.5));
}
