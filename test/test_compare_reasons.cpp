// compare on run directories written with the real manifest builders:
// cohorts, baselines, every reason code from an actual difference, imported
// records without raw samples, and refusals of broken evidence.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "lib/compare/compare.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/error.hpp"
#include "test/test_compare_support.hpp"
#include "test/test_digest_support.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using kibench::compare::CompareReport;
using kibench::compare::ReasonCode;
using kibench::compare::ViewProfile;
using namespace kibench::test;

namespace {

CompareReport compare_paths(const std::vector<fs::path> &paths, std::optional<std::string> baseline = {}) {
  kibench::compare::CompareOptions options;
  options.baseline = std::move(baseline);
  options.bootstrap.resamples = 1000;
  return kibench::compare::compare_runs(kibench::compare::load_runs(paths), options);
}

std::set<std::string> codes(const kibench::compare::PairView &view) {
  std::set<std::string> out;
  for (const auto &reason : view.reasons) out.insert(std::string(kibench::compare::to_string(reason.code)));
  return out;
}

const kibench::compare::PairView &only_view(const std::vector<kibench::compare::PairView> &views) {
  REQUIRE(views.size() == 1);
  return views.front();
}

// A run of the standard case and one of `other`, in two directories: the
// reasons the second is not comparable with the first (the baseline).
std::set<std::string> reasons_for(const FixtureCase &other) {
  ScratchDirectory scratch("compare-reasons");
  write_run_directory(scratch / "a", FixtureCase::standard(),
                      {FixtureRun("cpu-reference", quiet_samples(1000, 1))});
  write_run_directory(scratch / "b", other, {FixtureRun("cpu-reference", quiet_samples(1000, 2))});
  const CompareReport report = compare_paths({scratch / "a", scratch / "b"});
  REQUIRE(report.cohorts.size() == 2);
  return codes(only_view(report.not_comparable));
}

} // namespace

TEST_CASE("runs of one interleaved invocation form one cohort, ranked and paired", "[compare][cohort]") {
  ScratchDirectory scratch("compare-cohort");
  write_run_directory(scratch / "run", FixtureCase::standard(),
                      {FixtureRun("cpu-fp64", quiet_samples(1100, 1)),
                       FixtureRun("cpu-reference", quiet_samples(1000, 2)),
                       FixtureRun("fast", quiet_samples(900, 3))});
  const CompareReport report = compare_paths({scratch / "run"});
  REQUIRE(report.cohorts.size() == 1);
  CHECK(report.not_comparable.empty());
  const auto &cohort = report.cohorts.front();
  CHECK(report.runs[report.anchor].id == "cpu-reference");
  CHECK_THAT(report.anchor_choice, Contains("cpu-reference"));
  REQUIRE(cohort.baseline);
  CHECK(*cohort.baseline == report.anchor);
  REQUIRE(cohort.ranking.size() == 3);
  CHECK(report.runs[cohort.ranking[0].run].id == "fast");
  CHECK(cohort.ranking[0].rank == 1);
  CHECK(cohort.ranking[1].rank == 2);
  CHECK(cohort.ranking[1].is_baseline);
  CHECK(cohort.ranking[2].rank == 3);
  const auto &fast = *cohort.ranking[0].vs_baseline;
  CHECK(fast.pairing == kibench::compare::Pairing::paired);
  CHECK(fast.verdict == kibench::compare::Verdict::faster);
  CHECK(fast.medians.speedup.estimate == Approx(1000.0 / 900.0).epsilon(0.01));
  // Read from kibench's own protocol text, not the default.
  CHECK(report.runs[report.anchor].minimum_effect_stated);
  CHECK(report.runs[report.anchor].comparison_key.starts_with("sha256:"));
}

TEST_CASE("the baseline: --baseline by name, path or digest, else reference, cpu-reference, the first",
          "[compare][baseline]") {
  ScratchDirectory scratch("compare-baseline");
  write_run_directory(
      scratch / "run", FixtureCase::standard(),
      {FixtureRun("alpha", quiet_samples(1000, 1)), FixtureRun("beta", quiet_samples(1000, 2))});
  const auto first_given = compare_paths({scratch / "run"});
  CHECK(first_given.runs[first_given.anchor].id == "alpha");
  CHECK(first_given.anchor_choice == "the first run given");
  const auto by_name = compare_paths({scratch / "run"}, "beta");
  CHECK(by_name.runs[by_name.anchor].id == "beta");
  const auto by_path = compare_paths({scratch / "run"}, (scratch / "run" / "run.beta.json").string());
  CHECK(by_path.runs[by_path.anchor].id == "beta");
  const auto beta_digest = by_path.runs[by_path.anchor].digest;
  const auto by_digest = compare_paths({scratch / "run"}, beta_digest.substr(0, 20));
  CHECK(by_digest.runs[by_digest.anchor].id == "beta");
  CHECK_THROWS_AS(compare_paths({scratch / "run"}, "gamma"), kibench::InputError);

  write_run_directory(scratch / "ref", FixtureCase::standard(),
                      {FixtureRun("alpha", quiet_samples(1000, 1)),
                       FixtureRun("cpu-reference", quiet_samples(1000, 2)),
                       FixtureRun("reference", quiet_samples(1000, 3))});
  const auto preferred = compare_paths({scratch / "ref"});
  CHECK(preferred.runs[preferred.anchor].id == "reference");
}

TEST_CASE("two invocations of the same case share a cohort but are not paired", "[compare][cohort]") {
  ScratchDirectory scratch("compare-invocations");
  write_run_directory(scratch / "first", FixtureCase::standard(),
                      {FixtureRun("cpu-reference", quiet_samples(1000, 1)).in_invocation("first")});
  write_run_directory(scratch / "second", FixtureCase::standard(),
                      {FixtureRun("cpu-reference", quiet_samples(1000, 2)).in_invocation("second")});
  const CompareReport report = compare_paths({scratch / "first", scratch / "second"});
  REQUIRE(report.cohorts.size() == 1);
  const auto &ranking = report.cohorts.front().ranking;
  REQUIRE(ranking.size() == 2);
  // The same implementation twice: ids say which argument each came from.
  CHECK(report.runs[0].id == "cpu-reference[1]");
  CHECK(report.runs[1].id == "cpu-reference[2]");
  for (const auto &member : ranking) {
    if (member.vs_baseline) CHECK(member.vs_baseline->pairing == kibench::compare::Pairing::independent);
  }
  CHECK(ranking[0].rank == ranking[1].rank);

  // The directory holding both run directories reads the same two runs.
  const CompareReport parent = compare_paths({scratch.path()});
  REQUIRE(parent.runs.size() == 2);
  CHECK(parent.runs[0].comparison_key == parent.runs[1].comparison_key);
}

TEST_CASE("every reason code comes from an actual difference", "[compare][reasons]") {
  const FixtureCase standard = FixtureCase::standard();

  SECTION("WORKLOAD_MISMATCH alone: another workload of the same operation and policy") {
    FixtureCase other = standard;
    other.workload = kibench::json::parse_file(kibench::test::source_dir() / "workloads" / "small" /
                                               "small-v1000-h64-t32-ignore25.json");
    CHECK(reasons_for(other) == std::set<std::string>{"WORKLOAD_MISMATCH"});
  }
  SECTION("OPERATION_MISMATCH: the workload names another OperationSpec") {
    FixtureCase other = standard;
    spec_of(other.operation).set("family", "changed");
    spec_of(other.workload).set("operationSpecDigest", kibench::manifest_digest(other.operation));
    CHECK(reasons_for(other) == std::set<std::string>{"OPERATION_MISMATCH", "WORKLOAD_MISMATCH"});
  }
  SECTION("PROTOCOL_INCOMPARABLE: measured with other settings") {
    FixtureCase other = standard;
    kibench::ProtocolSettings settings;
    settings.timer = "steady_clock";
    settings.cold = false;
    settings.warmup_runs = 7;
    other.protocol = kibench::protocol_manifest(settings, "cpu-fp64", {});
    CHECK(reasons_for(other) == std::set<std::string>{"PROTOCOL_INCOMPARABLE"});
  }
  SECTION("ENVIRONMENT_MISMATCH: another host") {
    FixtureCase other = standard;
    spec_of(other.environment).find("hardware")->as_object().set("product", "Other CPU");
    CHECK(reasons_for(other) == std::set<std::string>{"ENVIRONMENT_MISMATCH"});
  }
  SECTION("CORRECTNESS_POLICY_MISMATCH: a looser tolerance (which is also another workload)") {
    FixtureCase other = standard;
    spec_of(other.workload).find("correctness")->as_object().set("maxRelativeError", 0.02);
    CHECK(reasons_for(other) == std::set<std::string>{"CORRECTNESS_POLICY_MISMATCH", "WORKLOAD_MISMATCH"});
  }
  SECTION("METRIC_MISMATCH: another primary statistic") {
    ScratchDirectory scratch("compare-metric");
    write_run_directory(scratch / "a", standard, {FixtureRun("cpu-reference", quiet_samples(1000, 1))});
    write_run_directory(scratch / "b", standard, {FixtureRun("cpu-reference", quiet_samples(1000, 2))});
    auto run = kibench::json::parse_file(scratch / "b" / "run.cpu-reference.json");
    spec_of(run).find("timing")->as_object().set("primaryStatistic", "mean");
    kibench::test::write_manifest(scratch / "b" / "run.cpu-reference.json", run);
    const auto report = compare_paths({scratch / "a", scratch / "b"});
    CHECK(codes(only_view(report.not_comparable)) == std::set<std::string>{"METRIC_MISMATCH"});
  }
  SECTION("STATUS_NOT_PASSED: in the cohort, described, never ranked") {
    ScratchDirectory scratch("compare-status");
    write_run_directory(scratch / "run", standard,
                        {FixtureRun("cpu-reference", quiet_samples(1000, 1)),
                         FixtureRun("wrong", quiet_samples(500, 2)).with_status("incorrect_numerical")});
    const auto report = compare_paths({scratch / "run"});
    REQUIRE(report.cohorts.size() == 1);
    const auto &cohort = report.cohorts.front();
    CHECK(cohort.ranking.size() == 1);
    const auto &view = only_view(cohort.not_ranked);
    CHECK(codes(view) == std::set<std::string>{"STATUS_NOT_PASSED"});
    CHECK(view.profile == ViewProfile::source_native);
    REQUIRE(view.speedup);
    CHECK(*view.speedup == Approx(2.0).epsilon(0.01));
    CHECK_THAT(view.reasons.front().detail, Contains("incorrect_numerical"));
  }
  SECTION("MISSING_RAW_SAMPLES: a run with only a reported median") {
    ScratchDirectory scratch("compare-missing");
    write_run_directory(scratch / "run", standard,
                        {FixtureRun("cpu-reference", quiet_samples(1000, 1)),
                         FixtureRun("reported", quiet_samples(1000, 2)).without_raw_samples()});
    const auto report = compare_paths({scratch / "run"});
    const auto &view = only_view(report.cohorts.front().not_ranked);
    CHECK(codes(view) == std::set<std::string>{"MISSING_RAW_SAMPLES"});
    CHECK(report.runs[view.run].median_ns == Approx(1000).epsilon(0.01));
  }
}

TEST_CASE("an imported record beside our runs: a compatible_workload view, never a ranking",
          "[compare][imported]") {
  ScratchDirectory scratch("compare-imported");
  write_run_directory(scratch / "ours", FixtureCase::standard(),
                      {FixtureRun("cpu-reference", quiet_samples(1000, 1))});
  // An imported record directory: the seed row's manifests, one per file.
  const auto bodies = kibench::json::parse_file(kibench::test::liger_seed_row_file());
  const fs::path imported = scratch / "liger-seed";
  fs::create_directories(imported);
  const std::pair<const char *, const char *> files[] = {{"OperationSpec", "operation.json"},
                                                         {"WorkloadCase", "workload.json"},
                                                         {"SoftwareProject", "project.json"},
                                                         {"ImplementationRevision", "implementation.json"},
                                                         {"BenchmarkProtocol", "protocol.json"},
                                                         {"ExecutionEnvironment", "environment.json"},
                                                         {"BenchmarkRun", "run.json"}};
  for (const auto &[kind, file] : files) kibench::test::write_manifest(imported / file, *bodies.find(kind));

  const auto report = compare_paths({scratch / "ours", imported});
  REQUIRE(report.cohorts.size() == 2);
  // The imported record's comparison key is KernelIndex's.
  CHECK(report.runs[1].comparison_key == kibench::test::kSeedRowComparisonKey);
  CHECK(report.cohorts[1].ranking.empty());
  const auto &view = only_view(report.not_comparable);
  CHECK(codes(view) == std::set<std::string>{"WORKLOAD_MISMATCH", "PROTOCOL_INCOMPARABLE",
                                             "ENVIRONMENT_MISMATCH", "CORRECTNESS_POLICY_MISMATCH",
                                             "MISSING_RAW_SAMPLES"});
  CHECK(view.profile == ViewProfile::compatible_workload);
  REQUIRE(view.speedup);
  CHECK(*view.speedup == Approx(1000.0 / 213159866.0).epsilon(0.01));
  CHECK_FALSE(view.caveats.empty());

  SECTION("two rows of the same source and cohort: a source_native view") {
    auto run = *bodies.find("BenchmarkRun");
    auto implementation = *bodies.find("ImplementationRevision");
    implementation.as_object().set("metadata",
                                   kibench::json::Object{{"name", "liger-bench-distill-jsd-loss-liger"}});
    spec_of(implementation).set("callable", kibench::json::Object{{"language", "triton"}});
    spec_of(run).set("implementationDigest", kibench::manifest_digest(implementation));
    spec_of(run).find("timing")->as_object().find("latencyNs")->as_object().set("median", 106579933);
    const fs::path sibling = scratch / "liger-sibling";
    fs::create_directories(sibling);
    for (const auto &[kind, file] : files) kibench::test::write_manifest(sibling / file, *bodies.find(kind));
    kibench::test::write_manifest(sibling / "implementation.json", implementation);
    kibench::test::write_manifest(sibling / "run.json", run);

    const auto both = compare_paths({imported, sibling});
    REQUIRE(both.cohorts.size() == 1);
    const auto &cohort = both.cohorts.front();
    CHECK(cohort.ranking.empty());
    REQUIRE(cohort.not_ranked.size() == 2);
    // The first given is the reference point: its own reason, no view.
    const auto &reference_point = cohort.not_ranked[0];
    CHECK(reference_point.anchor == reference_point.run);
    CHECK(codes(reference_point) == std::set<std::string>{"MISSING_RAW_SAMPLES"});
    CHECK(reference_point.reasons.size() == 1);
    CHECK_FALSE(reference_point.speedup);
    const auto &sibling_view = cohort.not_ranked[1];
    CHECK(codes(sibling_view) == std::set<std::string>{"MISSING_RAW_SAMPLES"});
    CHECK(sibling_view.profile == ViewProfile::source_native);
    REQUIRE(sibling_view.speedup);
    CHECK(*sibling_view.speedup == Approx(2.0).epsilon(0.001));
  }
}

TEST_CASE("broken evidence is refused, naming the file", "[compare][refuse]") {
  ScratchDirectory scratch("compare-refuse");
  write_run_directory(scratch / "run", FixtureCase::standard(),
                      {FixtureRun("cpu-reference", quiet_samples(1000, 1))});

  SECTION("an edited raw samples file fails its digest") {
    std::string text = kibench::test::read_file(scratch / "run" / "samples.cpu-reference.json");
    text.replace(text.find("\"ns\": "), 6, "\"ns\": 1");
    kibench::test::write_file(scratch / "run" / "samples.cpu-reference.json", text);
    try {
      compare_paths({scratch / "run"});
      FAIL("an edited samples file was accepted");
    } catch (const kibench::CheckFailed &e) {
      CHECK_THAT(e.what(), Contains("samples.cpu-reference.json"));
      CHECK_THAT(e.what(), Contains("does not match"));
    }
  }
  SECTION("an edited protocol no longer matches the digest the run names") {
    auto protocol = kibench::json::parse_file(scratch / "run" / "protocol.json");
    spec_of(protocol).set("devicePolicy", kibench::json::Object{{"clocksLocked", true}});
    kibench::test::write_manifest(scratch / "run" / "protocol.json", protocol);
    try {
      compare_paths({scratch / "run"});
      FAIL("an edited protocol was accepted");
    } catch (const kibench::CheckFailed &e) {
      CHECK_THAT(e.what(), Contains("spec.protocolDigest"));
      CHECK_THAT(e.what(), Contains("protocol.json"));
    }
  }
  SECTION("a missing workload is an input error naming the reference") {
    fs::remove(scratch / "run" / "workload.json");
    CHECK_THROWS_WITH(compare_paths({scratch / "run"}), Contains("spec.workloadDigest"));
    CHECK_THROWS_AS(compare_paths({scratch / "run"}), kibench::InputError);
  }
  SECTION("a status KernelIndex does not define is an input error naming the file and the field") {
    auto run = kibench::json::parse_file(scratch / "run" / "run.cpu-reference.json");
    spec_of(run).set("status", "finished");
    kibench::test::write_manifest(scratch / "run" / "run.cpu-reference.json", run);
    CHECK_THROWS_AS(compare_paths({scratch / "run"}), kibench::InputError);
    CHECK_THROWS_WITH(
        compare_paths({scratch / "run"}),
        Contains("run.cpu-reference.json: spec.status: \"finished\" is not a BenchmarkRun status "
                 "(passed, incorrect_shape,"));
  }
  SECTION("every status KernelIndex defines is read as written") {
    auto run = kibench::json::parse_file(scratch / "run" / "run.cpu-reference.json");
    spec_of(run).set("status", "revoked");
    kibench::test::write_manifest(scratch / "run" / "run.cpu-reference.json", run);
    const auto report = compare_paths({scratch / "run"});
    REQUIRE(report.runs.size() == 1);
    CHECK(report.runs.front().status == kibench::RunStatus::revoked);
    CHECK_FALSE(report.runs.front().rankable());
  }
  SECTION("a path with no run") {
    CHECK_THROWS_AS(compare_paths({scratch / "nothing-here"}), kibench::InputError);
    CHECK_THROWS_WITH(compare_paths({scratch / "run" / "workload.json"}), Contains("no BenchmarkRun"));
  }
  SECTION("a named run file finds its references beside it") {
    const auto report = compare_paths({scratch / "run" / "run.cpu-reference.json"});
    CHECK(report.runs.size() == 1);
    CHECK(report.runs.front().raw.has_value());
  }
}
