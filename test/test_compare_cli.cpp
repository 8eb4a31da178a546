// `kibench compare` as a user runs it: on fresh `kibench run` directories
// (CPU), in every output format, as a CI regression gate, and refusing bad
// input with the documented exit codes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "lib/json/parse.hpp"
#include "test/cli_process.hpp"
#include "test/test_compare_support.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using kibench::json::Value;
using namespace kibench::test;

namespace {

const fs::path kSmall = kibench::test::source_dir() / "workloads/small/small-v1000-h64-t32.json";

// Quick sampling so the suite stays fast; both invocations use the same
// settings, so they share a protocol (and a cohort).
const std::string kQuick = "--min-samples 10 --min-time 0 --warmup 1 --max-samples 40";

fs::path kibench_run(const fs::path &out, const std::string &implementations) {
  const auto run = run_kibench("run " + quoted(kSmall) + " --impl " + implementations + " --out " +
                               quoted(out) + " " + kQuick);
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(out)) dirs.push_back(entry.path());
  REQUIRE(dirs.size() == 1);
  return dirs.front();
}

Value json_of(const kibench::test::ProcessResult &result) {
  INFO(result.err);
  REQUIRE(result.exit_code <= 1);
  return kibench::json::parse(result.out, "compare stdout");
}

const Value &at(const Value &value, std::string_view key) {
  const Value *member = value.find(key);
  REQUIRE(member != nullptr);
  return *member;
}

// A deterministic pair of directories: a cohort of the baseline and a
// candidate `slowdown` slower, and a run of another workload.
struct GateFixture {
  TempDir tmp;
  fs::path cohort = tmp.path() / "cohort";
  fs::path other = tmp.path() / "other";

  explicit GateFixture(double candidate_median) {
    kibench::test::write_run_directory(cohort, FixtureCase::standard(),
                                       {FixtureRun("cpu-reference", quiet_samples(1000, 1)),
                                        FixtureRun("candidate", quiet_samples(candidate_median, 2))});
    FixtureCase case_b = FixtureCase::standard();
    case_b.workload = kibench::json::parse_file(kibench::test::source_dir() /
                                                "workloads/small/small-v1000-h64-t32-tau2.json");
    kibench::test::write_run_directory(other, case_b, {FixtureRun("elsewhere", quiet_samples(800, 3))});
  }
};

} // namespace

TEST_CASE("compare on one kibench run: its implementations form one paired cohort", "[cli][compare]") {
  TempDir tmp;
  const fs::path run_dir = kibench_run(tmp.path() / "runs", "cpu-reference,cpu-fp64");

  const auto table = run_kibench("compare " + quoted(run_dir));
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("strict_exact"));
  CHECK_THAT(table.out, Contains("cpu-reference (baseline)"));
  CHECK_THAT(table.out, Contains("paired ("));

  const Value report = json_of(run_kibench("compare " + quoted(run_dir) + " --format json"));
  CHECK(at(at(report, "baseline"), "run").as_string() == "cpu-reference");
  REQUIRE(at(report, "cohorts").as_array().size() == 1);
  CHECK(at(report, "notComparable").as_array().empty());
  const Value &cohort = at(report, "cohorts").as_array().front();
  CHECK(at(cohort, "profile").as_string() == "strict_exact");
  const auto &ranking = at(cohort, "ranking").as_array();
  REQUIRE(ranking.size() == 2);
  for (const Value &member : ranking) {
    if (at(member, "baseline").as_bool()) continue;
    CHECK(at(member, "run").as_string() == "cpu-fp64");
    const Value &versus = at(member, "vsBaseline");
    CHECK(at(versus, "pairing").as_string() == "paired");
    // kibench run's rounds rotate (harness/interleave_order.hpp).
    CHECK_FALSE(at(versus, "fixedOrder").as_bool());
    CHECK(at(versus, "baselineSamples").as_number() >= 10);
    const Value &difference = at(versus, "differenceNs");
    CHECK(at(difference, "low").as_number() <= at(difference, "estimate").as_number());
    CHECK(at(difference, "estimate").as_number() <= at(difference, "high").as_number());
  }
}

TEST_CASE("compare on two invocations of the same run: one cohort, independent samples", "[cli][compare]") {
  TempDir tmp;
  const fs::path first = kibench_run(tmp.path() / "first", "cpu-reference");
  const fs::path second = kibench_run(tmp.path() / "second", "cpu-reference");
  const Value report =
      json_of(run_kibench("compare " + quoted(first) + " " + quoted(second) + " --format json"));
  const auto &runs = at(report, "runs").as_array();
  REQUIRE(runs.size() == 2);
  CHECK(at(runs[0], "id").as_string() == "cpu-reference[1]");
  CHECK(at(runs[1], "id").as_string() == "cpu-reference[2]");
  CHECK(at(runs[0], "comparisonKey") == at(runs[1], "comparisonKey"));
  REQUIRE(at(report, "cohorts").as_array().size() == 1);
  const auto &ranking = at(at(report, "cohorts").as_array().front(), "ranking").as_array();
  REQUIRE(ranking.size() == 2);
  const Value &candidate = at(ranking[0], "baseline").as_bool() ? ranking[1] : ranking[0];
  const Value &versus = at(candidate, "vsBaseline");
  CHECK(at(versus, "pairing").as_string() == "independent");
  // The same build twice: whatever CPU noise says, a shared verdict must
  // mean a shared rank.
  if (at(versus, "verdict").as_string() == "shared") CHECK(at(ranking[0], "rank") == at(ranking[1], "rank"));
}

TEST_CASE("compare --format markdown: sections and tables for a CI job summary", "[cli][compare]") {
  GateFixture fixture(1100);
  const auto result = run_kibench("compare " + quoted(fixture.cohort) + " " + quoted(fixture.other) +
                                  " --format markdown --resamples 1000");
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, StartsWith("## kibench compare\n"));
  CHECK_THAT(result.out, Contains("### Cohort 1 of 2 · strict_exact"));
  CHECK_THAT(result.out, Contains("| rank | run | median | n | vs baseline [95 % CI] |"));
  CHECK_THAT(result.out, Contains("| 1 | `cpu-reference` (baseline) |"));
  CHECK_THAT(result.out, Contains("| 2 | `candidate` |"));
  CHECK_THAT(result.out, Contains("**slower**"));
  CHECK_THAT(result.out, Contains("### Not comparable with the baseline `cpu-reference`"));
  CHECK_THAT(result.out, Contains("| `elsewhere` |"));
  CHECK_THAT(result.out, Contains("WORKLOAD_MISMATCH"));
  CHECK_THAT(result.out, Contains("compatible_workload view"));
}

TEST_CASE("compare --format json: one reproducible document", "[cli][compare]") {
  GateFixture fixture(1100);
  const std::string args =
      "compare " + quoted(fixture.cohort) + " " + quoted(fixture.other) + " --format json";
  const auto first = run_kibench(args);
  const auto again = run_kibench(args);
  CHECK(first.out == again.out);
  const Value report = json_of(first);
  CHECK(at(report, "format").as_string() == "kibench.dev/compare/v1");
  CHECK(at(at(report, "settings"), "seed").as_number() == 1);
  CHECK(at(at(report, "settings"), "resamples").as_number() == 5000);
  CHECK(at(report, "gate").is_null());
  const auto &cohorts = at(report, "cohorts").as_array();
  REQUIRE(cohorts.size() == 2);
  CHECK(at(cohorts[1], "profile").as_string() == "strict_exact");
  const Value &candidate = at(cohorts[0], "ranking").as_array()[1];
  CHECK(at(candidate, "rank").as_number() == 2);
  CHECK(at(at(candidate, "vsBaseline"), "verdict").as_string() == "slower");
  CHECK(at(at(at(candidate, "vsBaseline"), "speedup"), "estimate").as_number() ==
        Approx(1000.0 / 1100).epsilon(0.01));
  const auto &not_comparable = at(report, "notComparable").as_array();
  REQUIRE(not_comparable.size() == 1);
  CHECK(at(not_comparable[0], "run").as_string() == "elsewhere");
  CHECK(at(not_comparable[0], "profile").as_string() == "compatible_workload");
  CHECK(at(at(not_comparable[0], "reasons").as_array()[0], "code").as_string() == "WORKLOAD_MISMATCH");

  const Value reseeded = json_of(run_kibench(args + " --seed 2"));
  const Value &versus_1 = at(at(cohorts[0], "ranking").as_array()[1], "vsBaseline");
  const Value &versus_2 =
      at(at(at(reseeded, "cohorts").as_array()[0], "ranking").as_array()[1], "vsBaseline");
  CHECK(at(at(versus_1, "differenceNs"), "estimate") == at(at(versus_2, "differenceNs"), "estimate"));
  CHECK(at(at(versus_1, "differenceNs"), "low") != at(at(versus_2, "differenceNs"), "low"));
}

TEST_CASE("compare --fail-if-slower: the CI regression gate", "[cli][compare][gate]") {
  SECTION("10 % slower fails a 5 % gate, with the report still printed") {
    GateFixture fixture(1100);
    const auto result = run_kibench("compare " + quoted(fixture.cohort) + " --fail-if-slower 5");
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.err, Contains("regression gate failed"));
    CHECK_THAT(result.err, Contains("candidate"));
    CHECK_THAT(result.out, Contains("cpu-reference (baseline)"));
  }
  SECTION("10 % slower passes a 20 % gate") {
    GateFixture fixture(1100);
    const auto result = run_kibench("compare " + quoted(fixture.cohort) + " --fail-if-slower 20");
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.out, Contains("regression gate passed"));
  }
  SECTION("a faster candidate passes any gate") {
    GateFixture fixture(900);
    CHECK(run_kibench("compare " + quoted(fixture.cohort) + " --fail-if-slower 0").exit_code == 0);
  }
  SECTION("in json the gate is part of the document") {
    GateFixture fixture(1100);
    const auto result =
        run_kibench("compare " + quoted(fixture.cohort) + " --fail-if-slower 5 --format json");
    CHECK(result.exit_code == 1);
    const Value report = json_of(result);
    CHECK_FALSE(at(at(report, "gate"), "passed").as_bool());
    CHECK(at(at(at(report, "gate"), "regressions").as_array()[0], "candidate").as_string() == "candidate");
  }
  SECTION("a gate that could compare nothing fails") {
    GateFixture fixture(1100);
    const auto result = run_kibench("compare " + quoted(fixture.other) + " --fail-if-slower 5");
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.err, Contains("nothing to check"));
  }
}

TEST_CASE("compare refuses bad input with exit 2 and broken evidence with exit 1", "[cli][compare]") {
  GateFixture fixture(1000);
  CHECK(run_kibench("compare " + quoted(fixture.tmp.path() / "absent")).exit_code == 2);
  CHECK(run_kibench("compare " + quoted(fixture.cohort) + " --format yaml").exit_code == 2);
  const auto unknown = run_kibench("compare " + quoted(fixture.cohort) + " --baseline nobody");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Contains("--baseline nobody"));

  const fs::path samples = fixture.cohort / "samples.candidate.json";
  std::string text = kibench::test::read_file(samples);
  text.replace(text.find("\"round\": 3"), 10, "\"round\": 4");
  kibench::test::write_file(samples, text);
  const auto edited = run_kibench("compare " + quoted(fixture.cohort));
  CHECK(edited.exit_code == 1);
  CHECK_THAT(edited.err, Contains("samples.candidate.json"));
}
