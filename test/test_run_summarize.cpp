// What a run's figures are made of: summarize() derives the statistics,
// the throttled count and the effective throughput from the samples alone
// (no files), the check's verdict gives the status, and the run-file writer
// writes exactly the figures it is handed and returns the run's digest.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/digest/digest.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/implementation_result.hpp"
#include "lib/run/outcome.hpp"
#include "test/cli_process.hpp"

using namespace kibench;

namespace {

// T = V = 1000, H = 500, Hs = 250: forward GEMMs 2·T·V·(Hs + H) = 1.5e9
// FLOPs, backward GEMMs 2·2·T·V·Hs = 1e9 more.
Workload test_workload() {
  Workload w;
  w.name = "test-workload";
  w.tokens = 1000;
  w.vocab = 1000;
  w.hidden = 500;
  w.student_hidden = 250;
  return w;
}

Measurement measurement_of(const std::vector<double> &ns, const std::vector<bool> &throttled) {
  Measurement m;
  m.implementation = "fused";
  m.stop_reason = "max_samples";
  m.timer = "cuda_events";
  for (std::size_t k = 0; k < ns.size(); ++k)
    m.samples.push_back(Sample{.ns = ns[k], .round = k, .throttled = throttled[k]});
  return m;
}

SustainedMeasurement sustained(double latency_ns, std::optional<double> power_w) {
  SustainedRound r;
  r.invocations = 40;
  r.warmup_invocations = 10;
  r.latency_ns = latency_ns;
  if (power_w) r.power = PowerSummary{*power_w, 0.5, 7, 1800.0};
  return combine_sustained_rounds({r}, "nvml_energy");
}

} // namespace

TEST_CASE("summarize: statistics, throttled count and effective TFLOP/s from the samples",
          "[run][summarize]") {
  const Workload w = test_workload();
  // Median 2.5 ms: 2.5e9 FLOPs of a full pass in 2.5 ms is 1 TFLOP/s.
  const Measurement m = measurement_of({2.5e6, 1e6, 4e6, 2e6, 3e6}, {false, true, false, true, false});

  const ImplementationResult full = summarize(m, w, Pass::full);
  CHECK(full.latency_ns.count == 5);
  CHECK(full.latency_ns.median == 2.5e6);
  CHECK(full.latency_ns.minimum == 1e6);
  CHECK(full.latency_ns.maximum == 4e6);
  CHECK(full.throttled_samples == 2);
  CHECK(full.tflops == Approx(1.0).epsilon(1e-12));
  CHECK_FALSE(full.sustained);

  // The forward pass has only the forward GEMMs; the backward pass is
  // counted with its forward, as it runs it.
  CHECK(summarize(m, w, Pass::forward).tflops == Approx(0.6).epsilon(1e-12));
  CHECK(summarize(m, w, Pass::backward).tflops == Approx(1.0).epsilon(1e-12));

  // Pure: the same measurement gives the same result.
  const ImplementationResult again = summarize(m, w, Pass::full);
  CHECK(again.latency_ns.median == full.latency_ns.median);
  CHECK(again.latency_ns.ci95_low == full.latency_ns.ci95_low);
  CHECK(again.tflops == full.tflops);
}

TEST_CASE("summarize: the sustained phase's throughput and energy", "[run][summarize]") {
  const Workload w = test_workload();
  Measurement m = measurement_of({2e6, 2e6, 2e6}, {false, false, false});

  SECTION("with power: 2.5e9 FLOPs in 1.25 ms at 600 W is 2 TFLOP/s and 0.75 J") {
    m.sustained = sustained(1.25e6, 600.0);
    const ImplementationResult r = summarize(m, w, Pass::full);
    REQUIRE(r.sustained);
    CHECK(r.sustained->tflops == Approx(2.0).epsilon(1e-12));
    REQUIRE(r.sustained->energy_j);
    CHECK(*r.sustained->energy_j == Approx(0.75).epsilon(1e-12));
    CHECK(r.tflops == Approx(1.25).epsilon(1e-12)); // the cold median's: 2 ms
  }
  SECTION("without a counter step: throughput, no energy") {
    m.sustained = sustained(1.25e6, std::nullopt);
    const ImplementationResult r = summarize(m, w, Pass::full);
    REQUIRE(r.sustained);
    CHECK(r.sustained->tflops == Approx(2.0).epsilon(1e-12));
    CHECK_FALSE(r.sustained->energy_j);
  }
}

TEST_CASE("a check's status: passed, incorrect_numerical, or incomplete_evidence without one",
          "[run][status]") {
  CorrectnessVerdict verdict;
  verdict.passed = true;
  CHECK(status_of_check(verdict) == RunStatus::passed);
  verdict.passed = false;
  CHECK(status_of_check(verdict) == RunStatus::incorrect_numerical);
  CHECK(status_of_check(std::nullopt) == RunStatus::incomplete_evidence);

  WorkloadOutcome outcome;
  ImplementationOutcome floor;
  floor.facts.status = RunStatus::incomplete_evidence;
  outcome.implementations.push_back(floor);
  CHECK(outcome.no_failed_check());
  ImplementationOutcome wrong;
  wrong.facts.status = RunStatus::incorrect_numerical;
  outcome.implementations.push_back(wrong);
  CHECK_FALSE(outcome.no_failed_check());
}

TEST_CASE("the run-file writer writes the result it is handed and returns the run's digest",
          "[run][summarize]") {
  const Workload w = test_workload();
  test::TempDir tmp;
  io::StagedDirectory dir(tmp.path() / "run");
  RunDirectoryContext context;
  context.workload = &w;
  context.pass = Pass::full;
  context.workload_digest = context.protocol_digest = context.environment_digest = sha256_digest("x");
  context.observed_at = "2026-01-02T03:04:05.678Z";

  ImplementationFacts facts;
  facts.name = "fused";
  facts.measurement = measurement_of({2.5e6, 1e6, 4e6, 2e6, 3e6}, {false, true, false, true, false});
  facts.measurement.sustained = sustained(1.25e6, 600.0);
  facts.status = RunStatus::incomplete_evidence;
  const ImplementationResult result = summarize(facts.measurement, w, context.pass);

  SECTION("the digest is the written run's; its status and figures are the facts' and the result's") {
    const std::string digest =
        write_implementation_files(dir, context, "{}\n", sha256_digest("{}"), facts, result);
    dir.commit();
    const json::Value run = json::parse_file(tmp.path() / "run" / "run.fused.json");
    CHECK(digest == manifest_digest(run));
    CHECK(json::string_at(run, "spec.status") == "incomplete_evidence");
    double throughput = 0, throttled = 0, sustained_throughput = 0, energy = 0;
    for (const json::Value &m : json::member_at(run, "spec.measurements")->as_array()) {
      const std::string metric = json::string_at(m, "metric");
      const double value = json::member_at(m, "value")->as_number();
      if (metric == "throughput") throughput = value;
      if (metric == "throttled_samples") throttled = value;
      if (metric == "sustained_throughput") sustained_throughput = value;
      if (metric == "energy") energy = value;
    }
    CHECK(throughput == result.tflops);
    CHECK(throttled == 2);
    CHECK(sustained_throughput == result.sustained->tflops);
    CHECK(energy == *result.sustained->energy_j);
  }
  SECTION("one round: means over its invocations; several: medians over the rounds, counted in rounds") {
    const auto statistics_of = [&](const ImplementationFacts &f) {
      const ImplementationResult r = summarize(f.measurement, w, context.pass);
      (void)write_implementation_files(dir, context, "{}\n", sha256_digest("{}"), f, r); // read back below
      std::map<std::string, std::pair<std::string, double>> out;
      const json::Value run = json::parse_file(dir.staging_path() / "run.fused.json");
      for (const json::Value &m : json::member_at(run, "spec.measurements")->as_array())
        out[json::string_at(m, "metric")] = {json::string_at(m, "statistic"),
                                             json::member_at(m, "sampleCount")
                                                 ? json::member_at(m, "sampleCount")->as_number()
                                                 : -1.0};
      return out;
    };
    const auto one = statistics_of(facts);
    CHECK(one.at("sustained_latency") == std::pair<std::string, double>{"mean", 40.0});
    CHECK(one.at("power") == std::pair<std::string, double>{"mean", 7.0});
    CHECK(one.at("energy") == std::pair<std::string, double>{"mean", 40.0});
    ImplementationFacts rounds = facts;
    SustainedRound unpowered = facts.measurement.sustained->rounds.front();
    unpowered.power.reset();
    rounds.measurement.sustained = merge_sustained({*facts.measurement.sustained, *facts.measurement.sustained,
                                                    combine_sustained_rounds({unpowered}, "nvml_energy")});
    const auto three = statistics_of(rounds);
    CHECK(three.at("sustained_latency") == std::pair<std::string, double>{"median", 3.0});
    CHECK(three.at("sustained_throughput") == std::pair<std::string, double>{"median", 3.0});
    CHECK(three.at("power") == std::pair<std::string, double>{"median", 2.0});
    CHECK(three.at("energy") == std::pair<std::string, double>{"median", 2.0});
    CHECK(three.at("sustained_sm_clock").first == "mean");
  }
  SECTION("record_implementation: the facts, their summary and the digest written, in one outcome") {
    const ImplementationOutcome o = record_implementation(dir, context, "{}\n", sha256_digest("{}"), facts);
    dir.commit();
    CHECK(o.facts.name == "fused");
    CHECK(o.facts.status == RunStatus::incomplete_evidence);
    CHECK(o.result.latency_ns.median == result.latency_ns.median);
    CHECK(o.result.tflops == result.tflops);
    CHECK(o.result.throttled_samples == 2);
    CHECK(o.run_digest == manifest_digest(json::parse_file(tmp.path() / "run" / "run.fused.json")));
  }
  SECTION("a result that is not of these facts is refused") {
    Measurement other = facts.measurement;
    other.samples.pop_back();
    CHECK_THROWS_AS(write_implementation_files(dir, context, "{}\n", sha256_digest("{}"), facts,
                                               summarize(other, w, context.pass)),
                    std::logic_error);
    other = facts.measurement;
    other.sustained.reset();
    CHECK_THROWS_AS(write_implementation_files(dir, context, "{}\n", sha256_digest("{}"), facts,
                                               summarize(other, w, context.pass)),
                    std::logic_error);
  }
}
