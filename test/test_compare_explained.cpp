// compare says what differs: every protocol setting and environment field
// by name, the environment drift rule field by field, and
// --allow-environment-drift ranking across tolerated differences with the
// difference on every verdict (table, markdown, JSON).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "lib/compare/compare.hpp"
#include "lib/compare/environment_drift.hpp"
#include "lib/compare/json_printer.hpp"
#include "lib/compare/markdown_printer.hpp"
#include "lib/compare/protocol_differences.hpp"
#include "lib/compare/protocol_terms.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/compare/table_printer.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/envelope.hpp"
#include "test/cli_process.hpp"
#include "test/test_compare_support.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using kibench::ProtocolSettings;
using kibench::compare::CompareReport;
using kibench::compare::FieldDifference;
using kibench::compare::ReasonCode;
using kibench::json::Object;
using kibench::json::Value;
using namespace kibench::test;

namespace {

ProtocolSettings cpu_settings() {
  ProtocolSettings settings;
  settings.timer = "steady_clock";
  settings.cold = false;
  return settings;
}

std::vector<std::string> fields(const std::vector<FieldDifference> &differences) {
  std::vector<std::string> out;
  for (const auto &d : differences) out.push_back(d.field);
  return out;
}

const FieldDifference &only(const std::vector<FieldDifference> &differences) {
  REQUIRE(differences.size() == 1);
  return differences.front();
}

// A GPU host as kibench records one.
Value gpu_environment() {
  return kibench::make_manifest(
      "ExecutionEnvironment", Object{{"name", "ci-runner"}},
      Object{{"hardware", Object{{"vendor", "nvidia"},
                                 {"product", "NVIDIA H200"},
                                 {"architecture", "sm_90"},
                                 {"memoryBytes", 150109880320.0},
                                 {"count", 1}}},
             {"software", Object{{"operatingSystem", "Ubuntu 24.04.1 LTS"},
                                 {"kernel", "6.8.0-45-generic"},
                                 {"driver", "580.65.06"},
                                 {"cudaToolkit", "13.0"},
                                 {"compiler", "gcc 12.2.0"},
                                 {"libraries", Object{{"cublaslt", "130100"}, {"fmt", "9.1.0"}}}}},
             {"settings", Object{{"clocksLocked", false}, {"powerLimitWatts", 700}}}});
}

// The environment with one edit applied to its spec.
Value edited(const std::function<void(Object &spec)> &edit) {
  Value environment = gpu_environment();
  edit(spec_of(environment));
  return environment;
}

Object &member(Object &object, std::string_view key) {
  return object.find(key)->as_object();
}

CompareReport compare_paths(const std::vector<fs::path> &paths, bool allow_drift) {
  kibench::compare::CompareOptions options;
  options.bootstrap.resamples = 500;
  options.allow_environment_drift = allow_drift;
  options.fail_if_slower_percent = 5.0;
  return kibench::compare::compare_runs(kibench::compare::load_runs(paths), options);
}

} // namespace

TEST_CASE("every sampling setting kibench states in a protocol is named when it differs",
          "[compare][explain]") {
  const ProtocolSettings base = cpu_settings();
  struct Change {
    std::string field;
    std::function<void(ProtocolSettings &)> apply;
  };
  const std::vector<Change> changes = {
      {"maxSamples", [](ProtocolSettings &s) { s.max_samples = 300; }},
      {"minSamples", [](ProtocolSettings &s) { s.min_samples = 20; }},
      {"minTime", [](ProtocolSettings &s) { s.min_time_s = 0; }},
      {"maxNoise", [](ProtocolSettings &s) { s.max_noise = 0.002; }},
      {"timeout", [](ProtocolSettings &s) { s.timeout_s = 30; }},
      {"interleaved", [](ProtocolSettings &s) { s.interleave = false; }},
      {"shareRounds", [](ProtocolSettings &s) { s.share_rounds = true; }},
      {"powerState", [](ProtocolSettings &s) { s.power_state = kibench::PowerState::rested; }},
      {"powerState", [](ProtocolSettings &s) { s.power_state = kibench::PowerState::loaded; }},
      {"throttleFraction", [](ProtocolSettings &s) { s.throttle_fraction = 0.9; }},
      {"minimumEffect", [](ProtocolSettings &s) { s.minimum_effect = 0.02; }},
      {"measurement.warmupIterations", [](ProtocolSettings &s) { s.warmup_runs = 7; }},
  };
  const Value before = kibench::protocol_manifest(base, "cpu-fp64", {});
  for (const Change &change : changes) {
    ProtocolSettings settings = base;
    change.apply(settings);
    const Value after = kibench::protocol_manifest(settings, "cpu-fp64", {});
    INFO(change.field);
    CHECK(fields(kibench::compare::protocol_differences(before, after)) ==
          std::vector<std::string>{change.field});
  }

  SECTION("values are shown with their unit, first run first") {
    ProtocolSettings settings = base;
    settings.max_samples = 300;
    settings.min_time_s = 0;
    const auto differences =
        kibench::compare::protocol_differences(kibench::protocol_manifest(settings, "cpu-fp64", {}), before);
    CHECK(kibench::compare::join(differences) == "minTime 0 s ≠ 0.5 s, maxSamples 300 ≠ 1000");
  }
  SECTION("the pass and cache state are named beside the family they change") {
    ProtocolSettings settings = base;
    settings.pass = kibench::Pass::forward;
    settings.cold = true;
    const auto differences =
        kibench::compare::protocol_differences(before, kibench::protocol_manifest(settings, "cpu-fp64", {}));
    const auto named = fields(differences);
    CHECK(std::set<std::string>(named.begin(), named.end()) ==
          std::set<std::string>{"comparability.family", "pass", "cache"});
  }
  SECTION("another harness's notes: the first differing sentence, by its field") {
    Value a = before, b = before;
    spec_of(a).find("comparability")->as_object().set("notes", "Median of 100 runs. Clocks locked.");
    spec_of(b).find("comparability")->as_object().set("notes", "Median of 100 runs. Clocks free.");
    const auto differences = kibench::compare::protocol_differences(a, b);
    const auto &difference = only(differences);
    CHECK(difference.field == "comparability.notes");
    CHECK(difference.first == "Clocks locked.");
    CHECK(difference.second == "Clocks free.");
  }
  SECTION("kibench's notes differing beside their settings: the sentence as written, values and all") {
    Value a = before, b = before;
    const std::string notes = kibench::json::string_at(before, "spec.comparability.notes");
    const std::string one = "one invocation per sample";
    REQUIRE(notes.find(one) != std::string::npos);
    std::string changed = notes;
    changed.replace(changed.find(one), one.size(), "ten invocations per sample");
    spec_of(b).find("comparability")->as_object().set("notes", changed);
    const auto differences = kibench::compare::protocol_differences(a, b);
    const auto &difference = only(differences);
    CHECK(difference.field == "comparability.notes");
    CHECK(difference.first.starts_with("Timed: the full pass, one invocation per sample, with steady_clock"));
    CHECK(difference.second.starts_with("Timed: the full pass, ten invocations per sample, with steady_clock"));
    CHECK(difference.first.find("{}") == std::string::npos);
    CHECK(difference.second.find("{}") == std::string::npos);
  }
}

TEST_CASE("kibench's notes read back as the settings that wrote them", "[compare][explain]") {
  ProtocolSettings settings = cpu_settings();
  settings.max_samples = 250;
  settings.max_noise = 0.003;
  settings.share_rounds = true;
  const auto reading = kibench::compare::read_notes_settings(settings.describe());
  std::vector<std::string> shown;
  for (const auto &s : reading.settings) shown.push_back(s.name + "=" + s.value);
  CHECK(shown == std::vector<std::string>{"pass=full", "cache=warm", "maxNoise=0.003", "minSamples=10",
                                          "minTime=0.5 s", "maxSamples=250", "timeout=60 s",
                                          "interleaved=yes (Williams-design order)", "throttleFraction=0.95",
                                          "minimumEffect=0.01", "shareRounds=yes", "powerState=as-is"});
  CHECK(reading.rest.find("250") == std::string::npos);
}

TEST_CASE("the environment drift rule, field by field", "[compare][explain][drift]") {
  const Value base = gpu_environment();
  struct Case {
    const char *what;
    std::function<void(Object &)> edit;
    std::string field;
    bool tolerated;
  };
  const std::vector<Case> cases = {
      {"kernel patch level", [](Object &s) { member(s, "software").set("kernel", "6.8.0-48-generic"); },
       "software.kernel", true},
      {"kernel minor version", [](Object &s) { member(s, "software").set("kernel", "6.9.0-1-generic"); },
       "software.kernel", false},
      {"driver within its branch", [](Object &s) { member(s, "software").set("driver", "580.95.05"); },
       "software.driver", true},
      {"another driver branch", [](Object &s) { member(s, "software").set("driver", "575.57.08"); },
       "software.driver", false},
      {"CUDA minor version", [](Object &s) { member(s, "software").set("cudaToolkit", "13.1"); },
       "software.cudaToolkit", false},
      {"OS point release",
       [](Object &s) { member(s, "software").set("operatingSystem", "Ubuntu 24.04.3 LTS"); },
       "software.operatingSystem", true},
      {"another OS release",
       [](Object &s) { member(s, "software").set("operatingSystem", "Ubuntu 22.04.5 LTS"); },
       "software.operatingSystem", false},
      {"compiler patch", [](Object &s) { member(s, "software").set("compiler", "gcc 12.3.0"); },
       "software.compiler", false},
      {"compiler bug-fix", [](Object &s) { member(s, "software").set("compiler", "gcc 12.2.1"); },
       "software.compiler", true},
      {"cuBLASLt patch (integer version)",
       [](Object &s) { member(member(s, "software"), "libraries").set("cublaslt", "130101"); },
       "software.libraries.cublaslt", true},
      {"cuBLASLt minor (integer version)",
       [](Object &s) { member(member(s, "software"), "libraries").set("cublaslt", "130200"); },
       "software.libraries.cublaslt", false},
      {"library patch", [](Object &s) { member(member(s, "software"), "libraries").set("fmt", "9.1.1"); },
       "software.libraries.fmt", true},
      {"library only one records",
       [](Object &s) { member(member(s, "software"), "libraries").set("simdjson", "3.0.1"); },
       "software.libraries.simdjson", false},
      {"GPU product", [](Object &s) { member(s, "hardware").set("product", "NVIDIA H100 80GB HBM3"); },
       "hardware.product", false},
      {"architecture", [](Object &s) { member(s, "hardware").set("architecture", "sm_100"); },
       "hardware.architecture", false},
      {"power limit", [](Object &s) { member(s, "settings").set("powerLimitWatts", 600); },
       "settings.powerLimitWatts", false},
  };
  for (const Case &c : cases) {
    INFO(c.what);
    const Value other = edited(c.edit);
    const auto differences = kibench::compare::environment_differences(base, other);
    const FieldDifference &difference = only(differences);
    CHECK(difference.field == c.field);
    CHECK(difference.within_drift_rule == c.tolerated);
    CHECK(kibench::compare::all_within_drift_rule(differences) == c.tolerated);
    // Equal equivalence keys exactly when the rule tolerates every difference.
    CHECK((kibench::compare::drift_equivalence_key(base) == kibench::compare::drift_equivalence_key(other)) ==
          c.tolerated);
  }
  SECTION("several tolerated differences at once stay one equivalence class") {
    const Value updated = edited([](Object &s) {
      member(s, "software").set("kernel", "6.8.0-51-generic");
      member(s, "software").set("driver", "580.82.07");
      member(member(s, "software"), "libraries").set("fmt", "9.1.2");
    });
    CHECK(kibench::compare::environment_differences(base, updated).size() == 3);
    CHECK(kibench::compare::drift_equivalence_key(base) == kibench::compare::drift_equivalence_key(updated));
  }
}

TEST_CASE("compare names the environment fields that split two cohorts; --allow-environment-drift ranks "
          "them together with the difference on every verdict",
          "[compare][explain][drift]") {
  TempDir tmp;
  const fs::path scratch = tmp.path();
  FixtureCase before = FixtureCase::standard();
  before.environment = gpu_environment();
  FixtureCase after = before;
  after.environment = edited([](Object &s) { member(s, "software").set("kernel", "6.8.0-48-generic"); });
  write_run_directory(scratch / "main", before, {FixtureRun("cpu-reference", quiet_samples(1000, 1))});
  write_run_directory(scratch / "pr", after,
                      {FixtureRun("cpu-reference", quiet_samples(1000, 2)).in_invocation("pr")});

  SECTION("without the flag: two cohorts, the field named, the flag suggested; the gate checks nothing") {
    const CompareReport report = compare_paths({scratch / "main", scratch / "pr"}, false);
    REQUIRE(report.cohorts.size() == 2);
    REQUIRE(report.not_comparable.size() == 1);
    const auto &reason = report.not_comparable.front().reasons.front();
    CHECK(reason.code == ReasonCode::environment_mismatch);
    CHECK_THAT(reason.detail, Contains("software.kernel 6.8.0-45-generic ≠ 6.8.0-48-generic"));
    CHECK_THAT(reason.detail, Contains("--allow-environment-drift ranks them together"));
    CHECK(fields(reason.differences) == std::vector<std::string>{"software.kernel"});
    REQUIRE(report.gate);
    CHECK(report.gate->checked == 0);
  }
  SECTION("with it: one environment_drift cohort, ranked, a caveat on each verdict in every printer") {
    const CompareReport report = compare_paths({scratch / "main", scratch / "pr"}, true);
    REQUIRE(report.cohorts.size() == 1);
    const auto &cohort = report.cohorts.front();
    CHECK(kibench::compare::cohort_profile(cohort) == "environment_drift");
    CHECK(fields(cohort.environment_drift) == std::vector<std::string>{"software.kernel"});
    CHECK(cohort.comparison_key == report.runs[0].drift_comparison_key);
    CHECK(cohort.comparison_key != report.runs[0].comparison_key);
    REQUIRE(cohort.ranking.size() == 2);
    for (const auto &ranked : cohort.ranking) {
      REQUIRE(ranked.caveats.size() == 1);
      CHECK_THAT(ranked.caveats.front(), Contains("software.kernel 6.8.0-45-generic ≠ 6.8.0-48-generic"));
    }
    REQUIRE(report.gate);
    CHECK(report.gate->checked == 1);

    const std::string table = kibench::compare::render_table(report);
    CHECK_THAT(table, Contains("environment_drift"));
    CHECK_THAT(table,
               Contains("cpu-reference[2]: caveat: measured in another environment than the baseline"));
    const std::string markdown = kibench::compare::render_markdown(report);
    CHECK_THAT(markdown, Contains("### Cohort 1 of 1 · environment_drift"));
    CHECK_THAT(markdown, Contains("  - caveat: measured in another environment than the baseline"));
    const Value document = kibench::compare::report_document(report);
    const Value &json_cohort = document.find("cohorts")->as_array().front();
    CHECK(json_cohort.find("profile")->as_string() == "environment_drift");
    CHECK(json_cohort.find("environmentDrift")->as_array().size() == 1);
    for (const Value &entry : json_cohort.find("ranking")->as_array())
      CHECK(entry.find("caveats")->as_array().size() == 1);
  }
  SECTION("runs of one environment stay a strict_exact cohort with the flag on") {
    const CompareReport report = compare_paths({scratch / "main"}, true);
    REQUIRE(report.cohorts.size() == 1);
    CHECK(kibench::compare::cohort_profile(report.cohorts.front()) == "strict_exact");
    CHECK(report.cohorts.front().comparison_key == report.runs[0].comparison_key);
  }
  SECTION("never across GPUs: another product stays another cohort, the field named as beyond the rule") {
    FixtureCase other_gpu = before;
    other_gpu.environment =
        edited([](Object &s) { member(s, "hardware").set("product", "NVIDIA H100 80GB HBM3"); });
    write_run_directory(scratch / "h100", other_gpu, {FixtureRun("cpu-reference", quiet_samples(1000, 3))});
    const CompareReport report = compare_paths({scratch / "main", scratch / "h100"}, true);
    REQUIRE(report.cohorts.size() == 2);
    const auto &reason = report.not_comparable.front().reasons.front();
    CHECK(reason.code == ReasonCode::environment_mismatch);
    CHECK_THAT(reason.detail, Contains("(beyond the environment drift rule: hardware.product)"));
  }
}

TEST_CASE("a protocol that differs is named in the reason, field by field, in JSON too",
          "[compare][explain]") {
  TempDir tmp;
  const fs::path scratch = tmp.path();
  const FixtureCase standard = FixtureCase::standard();
  FixtureCase other = standard;
  ProtocolSettings settings = cpu_settings();
  settings.max_samples = 300;
  other.protocol = kibench::protocol_manifest(settings, "cpu-fp64", {});
  write_run_directory(scratch / "a", other, {FixtureRun("cpu-reference", quiet_samples(1000, 1))});
  write_run_directory(scratch / "b", standard, {FixtureRun("cpu-reference", quiet_samples(1000, 2))});
  const CompareReport report = compare_paths({scratch / "a", scratch / "b"}, false);
  REQUIRE(report.not_comparable.size() == 1);
  const auto &reason = report.not_comparable.front().reasons.front();
  CHECK(reason.code == ReasonCode::protocol_incomparable);
  CHECK_THAT(reason.detail, Contains(": maxSamples 300 ≠ 1000"));
  const Value document = kibench::compare::report_document(report);
  const Value &json_reason =
      document.find("notComparable")->as_array().front().find("reasons")->as_array().front();
  const Value &difference = json_reason.find("differences")->as_array().front();
  CHECK(difference.find("field")->as_string() == "maxSamples");
  CHECK(difference.find("values")->as_array() == kibench::json::Array{"300", "1000"});
}

TEST_CASE("kibench compare --allow-environment-drift: the CI gate compares across a runner's kernel update",
          "[compare][explain][drift][cli]") {
  TempDir tmp;
  const fs::path scratch = tmp.path();
  FixtureCase before = FixtureCase::standard();
  before.environment = gpu_environment();
  FixtureCase after = before;
  after.environment = edited([](Object &s) { member(s, "software").set("kernel", "6.8.0-48-generic"); });
  write_run_directory(scratch / "main", before, {FixtureRun("cpu-reference", quiet_samples(1000, 1))});
  write_run_directory(scratch / "pr", after,
                      {FixtureRun("cpu-reference", quiet_samples(1000, 2)).in_invocation("pr")});
  const std::string runs =
      kibench::test::quoted(scratch / "main") + " " + kibench::test::quoted(scratch / "pr");

  const auto strict = kibench::test::run_kibench("compare " + runs + " --fail-if-slower 5");
  CHECK(strict.exit_code == 1); // the gate compared nothing
  CHECK_THAT(strict.out, Contains("software.kernel 6.8.0-45-generic ≠ 6.8.0-48-generic"));

  const auto drift =
      kibench::test::run_kibench("compare " + runs + " --fail-if-slower 5 --allow-environment-drift");
  INFO(drift.out << drift.err);
  CHECK(drift.exit_code == 0);
  CHECK_THAT(drift.out, Contains("environment_drift"));
  CHECK_THAT(drift.out, Contains("regression gate passed"));
}
