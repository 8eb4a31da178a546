// The printed table of `kibench run`, from a finished outcome alone: the
// figures against the reference and the floor, the correctness cell, the
// skipped implementations, the tensor cores' floor, the sustained phase and
// the directory written.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/run/outcome.hpp"
#include "lib/run/outcome_summary.hpp"
#include "lib/run/run_printer.hpp"
#include "lib/operations/registry.hpp"

using namespace kibench;

namespace {

// T = V = 1000, H = 500, Hs = 250: 2.5e9 FLOPs of GEMMs per full pass, so
// a median of M ms is 2.5 / M TFLOP/s.
Workload test_workload() {
  Workload w;
  w.name = "test-workload";
  w.tokens = 1000;
  w.vocab = 1000;
  w.hidden = 500;
  w.student_hidden = 250;
  return w;
}

CorrectnessVerdict verdict(bool passed, std::vector<double> rel_l2) {
  CorrectnessVerdict v;
  v.passed = passed;
  for (std::size_t k = 0; k < rel_l2.size(); ++k) {
    ErrorStats e;
    e.output = k == 0 ? "loss" : "grad_student_input";
    e.rel_l2_error = rel_l2[k];
    e.passed = passed;
    v.outputs.push_back(e);
  }
  return v;
}

ImplementationOutcome finished(const Workload &w, std::string name, double median_ns,
                               std::optional<CorrectnessVerdict> check, std::uint64_t peak,
                               std::uint64_t workspace,
                               std::optional<SustainedMeasurement> sustained = std::nullopt,
                               std::string stop_reason = "noise_target") {
  ImplementationOutcome o;
  o.facts.name = std::move(name);
  o.facts.measurement.stop_reason = std::move(stop_reason);
  o.facts.verdict = std::move(check);
  o.facts.status = status_of_check(o.facts.verdict);
  for (std::size_t k = 0; k < 3; ++k)
    o.facts.measurement.samples.push_back(Sample{.ns = median_ns, .round = k});
  o.facts.measurement.sustained = std::move(sustained);
  o.facts.memory.peak_bytes = peak;
  o.facts.memory.workspace_bytes = workspace;
  o.result = summarize(o.facts.measurement, w, Pass::full);
  return o;
}

SustainedMeasurement back_to_back(double latency_ns, std::optional<double> power_w) {
  SustainedRound r;
  r.invocations = 50;
  r.latency_ns = latency_ns;
  if (power_w) r.power = PowerSummary{*power_w, 0.5, 7, 1800.0};
  return combine_sustained_rounds({r}, "nvml_energy");
}

} // namespace

TEST_CASE("the run table: every figure in its column, then the floors, the sustained phase, the directory",
          "[run][printer]") {
  WorkloadOutcome o;
  o.workload = test_workload();
  const Workload &w = o.workload;
  o.run_dir = "runs/test";
  o.oracle = "cpu-fp64";
  o.oracle_loss = 1.25;
  o.implementations = {
      finished(w, "reference", 4e6, verdict(true, {1.5e-3, 2e-4}), 3'400'000'000, 120'000'000),
      finished(w, "fused", 2e6, verdict(false, {0.25, 1e-3}), 1'500'000, 2'048, back_to_back(1.25e6, 600.0)),
      finished(w, "cublas-floor", 1e6, std::nullopt, 0, 0, std::nullopt, "timeout"),
      finished(w, "wgmma-floor", 0.5e6, std::nullopt, 0, 0, back_to_back(0.5e6, std::nullopt), "max_samples"),
  };
  o.skipped = {{"cpu-reference", "too large for the CPU"}};

  CHECK(
      render_run_table(o) ==
      "\ntest-workload  (T=1000 V=1000 H=500 Hs=250, β=0.5 τ=1; 0.00 TFLOP of GEMMs per full pass)\n"
      "checked against cpu-fp64 (loss 1.25)\n\n"
      "implementation   median ms          p20–p80 ms       n     stop    vs ref  ÷ floor  TFLOP/s       "
      "peak  "
      "workspace  "
      "correctness\n"
      "reference            4.000         4.000–4.000       3    noise         –     4.00    0.625    3.40 "
      "GB   "
      "120.0 MB  "
      "passed (max rel 1.5e-03)\n"
      "fused                2.000         2.000–2.000       3    noise         –        –     1.25     1.5 "
      "MB     "
      "2.0 kB  "
      "FAILED (max rel 2.5e-01)\n"
      "cublas-floor         1.000         1.000–1.000       3 time cap     4.00×        –      2.5     0.0 "
      "kB     "
      "0.0 kB  "
      "not checked (no loss)\n"
      "wgmma-floor          0.500         0.500–0.500       3    n cap     8.00×     0.50        5     0.0 "
      "kB     "
      "0.0 kB  "
      "not checked (no loss)\n"
      "cpu-reference  skipped: too large for the CPU\n"
      "\n÷ wgmma-floor (the tensor cores alone, 0.500 ms): reference 8.00×, fused 4.00×, cublas-floor 2.00×\n"
      "\nback to back, warm (board energy counter):\n"
      "implementation     ms each       n  TFLOP/s   watts    J each   SM MHz\n"
      "fused                1.250      50        2     600      0.75     1800\n"
      "wgmma-floor          0.500      50        5       –   no step        –\n"
      "\nwritten: runs/test/\n");
}

TEST_CASE("the run table without the floors or a sustained phase: dashes, and no extra sections",
          "[run][printer]") {
  WorkloadOutcome o;
  o.workload = test_workload();
  o.run_dir = "out/run";
  o.oracle = "cpu-fp64";
  o.oracle_loss = 3.5;
  o.implementations = {
      finished(o.workload, "cpu-reference", 2.5e6, verdict(true, {1e-4}), 1'200'000, 780'000)};
  const std::string text = render_run_table(o);
  CHECK(text.find(
            "cpu-reference        2.500         2.500–2.500       3    noise         –        –        1    "
            " 1.2 MB   780.0 kB  passed (max rel 1.0e-04)\n") != std::string::npos);
  CHECK(text.find("warning") == std::string::npos);
  CHECK(text.find("wgmma-floor") == std::string::npos);
  CHECK(text.find("back to back") == std::string::npos);
  CHECK(text.ends_with("\nwritten: out/run/\n"));
}

TEST_CASE("the sustained table with several rounds: medians, and each lane's range of rounds", "[run][printer]") {
  WorkloadOutcome o;
  o.workload = test_workload();
  o.run_dir = "out/run";
  o.oracle = "cpu-fp64";
  o.oracle_loss = 3.5;
  const auto round = [](double ms, double watts) {
    SustainedRound r;
    r.invocations = 30;
    r.latency_ns = ms * 1e6;
    r.power = PowerSummary{watts, 0.2, 3, 1400.0};
    return r;
  };
  o.implementations = {
      finished(o.workload, "fused", 34e6, std::nullopt, 0, 0,
               combine_sustained_rounds({round(34.0, 690.0), round(35.5, 700.0), round(34.7, 695.0)}, "nvml")),
      finished(o.workload, "cublas-floor", 30e6, std::nullopt, 0, 0,
               combine_sustained_rounds({round(33.8, 697.0), round(30.5, 690.0), round(32.6, 694.0)}, "nvml")),
  };
  const std::string text = render_run_table(o);
  CHECK(text.find("\nback to back, warm (board energy counter; medians over the rounds):\n"
                  "implementation     ms each       n  TFLOP/s   watts    J each   SM MHz  rounds, ms each\n") !=
        std::string::npos);
  CHECK(text.find("\nfused               34.700      90") != std::string::npos);
  CHECK(text.find("  34.000–35.500\n") != std::string::npos);
  CHECK(text.find("\ncublas-floor        32.600      90") != std::string::npos);
  CHECK(text.find("  30.500–33.800\n") != std::string::npos);

  // The summary keeps the medians and every round, in the order they ran.
  const json::Value summary = outcome_summary(o);
  const json::Value &floor = summary.find("implementations")->as_array()[1];
  const json::Value *sustained = floor.find("sustained");
  REQUIRE(sustained != nullptr);
  CHECK(sustained->find("latencyNs")->as_number() == Approx(32.6e6));
  const json::Value *rounds = sustained->find("rounds");
  REQUIRE(rounds != nullptr);
  REQUIRE(rounds->as_array().size() == 3);
  CHECK(rounds->as_array()[1].find("latencyNs")->as_number() == Approx(30.5e6));
  CHECK(rounds->as_array()[1].find("energyJ")->as_number() == Approx(0.690 * 30.5));
}

// Samples of a spread whose median's relative standard error is known:
// 1.4826·MAD/median = 1.4826 · 0.1/1.0 over 8 samples gives 1.2533 ·
// 0.14826 / sqrt(8) = 6.57 %.
TEST_CASE("the run table says which implementations stopped at a cap short of the noise target",
          "[run][printer]") {
  WorkloadOutcome o;
  o.workload = test_workload();
  o.run_dir = "out/run";
  o.oracle = "cpu-fp64";
  o.noise_target = 0.005;
  const auto spread = [&](std::string name, std::string stop_reason) {
    ImplementationOutcome i;
    i.facts.name = std::move(name);
    i.facts.measurement.stop_reason = std::move(stop_reason);
    std::size_t round = 0;
    for (const double ns : {0.9e6, 0.9e6, 0.9e6, 1.0e6, 1.0e6, 1.1e6, 1.1e6, 1.1e6})
      i.facts.measurement.samples.push_back(Sample{.ns = ns, .round = round++});
    i.result = summarize(i.facts.measurement, o.workload, Pass::full);
    return i;
  };
  o.implementations = {spread("cpu-reference", "max_samples"), spread("fused", "timeout"),
                       spread("steady", "noise_target")};
  const std::string text = render_run_table(o);
  CHECK(text.find("warning: cpu-reference stopped at the sample cap (8 samples) with the median's noise at "
                  "6.57 %, above the 0.50 % target: raise --max-samples, or read its interval as wider\n") !=
        std::string::npos);
  CHECK(text.find("warning: fused stopped at the time limit (8 samples) with the median's noise at 6.57 %, "
                  "above the 0.50 % target: raise --timeout, or read its interval as wider\n") !=
        std::string::npos);
  CHECK(text.find("warning: steady") == std::string::npos);
  // At the time limit the warning says what a sample took beside its timed
  // run (another input set generated, a large output checked).
  o.implementations[1].facts.measurement.sampling_wall_s = 80.0;
  CHECK(render_run_table(o).find("warning: fused stopped at the time limit (8 samples, each taking 10.00 s of "
                                 "wall time) with the median's noise at 6.57 %") != std::string::npos);
  // A cap reached with the noise already within the target is no warning.
  o.noise_target = 0.1;
  CHECK(render_run_table(o).find("warning") == std::string::npos);
}

TEST_CASE("a bandwidth-bound workload shows GB/s and, where the board's peak is known, its share",
          "[run][printer]") {
  // jsd, T = 1000, V = 1000: 12 MB per full pass (two fp32 reads, one write),
  // so a median of 0.004 ms is 3000 GB/s.
  WorkloadOutcome o;
  o.workload.name = "jsd-workload";
  o.workload.operation_kind = operation_named("jsd");
  o.workload.tokens = 1000;
  o.workload.vocab = 1000;
  o.run_dir = "runs/jsd";
  o.oracle = "cpu-fp64";
  o.implementations = {finished(o.workload, "fused", 4000.0, verdict(true, {1e-7, 1e-6}), 1 << 20, 0)};
  const std::string unknown = render_run_table(o);
  CHECK(unknown.find("GB/s ") != std::string::npos);
  CHECK(unknown.find("% peak") == std::string::npos);
  CHECK(unknown.find(" 3e+03 ") != std::string::npos);
  o.peak_bandwidth_gbps = 3352.0;
  const std::string known = render_run_table(o);
  CHECK(known.find("GB/s (% peak)") != std::string::npos);
  CHECK(known.find("3000 (89 %)") != std::string::npos);
}
