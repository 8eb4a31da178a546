// `kibench import external RESULT --like RUN_DIR` end to end: a CPU `kibench
// run` directory, a synthetic result of an external harness beside it, and
// what digest --verify and compare make of the imported directory. Also the
// shared run-file writer against the CI baseline that `kibench run` wrote on
// an H200, byte for byte, so the refactor that gave the importer that writer
// did not change kibench run's output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/digest/digest.hpp"
#include "lib/harness/raw_samples.hpp"
#include "lib/harness/throttle.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/outcome_summary.hpp"
#include "lib/workload/workload.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using kibench::json::Array;
using kibench::json::Object;
using kibench::json::Value;
using namespace kibench::test;

namespace {

const fs::path kSource = kibench::test::source_dir();
const fs::path kSmall = kSource / "workloads/small/small-v1000-h64-t32.json";
const std::string kQuick = "--min-samples 10 --max-samples 40 --min-time 0 --warmup 1";
constexpr const char *kInvocation = "2026-12-02T15:40:00.123Z";

fs::path only_entry(const fs::path &dir) {
  std::vector<fs::path> entries;
  for (const auto &e : fs::directory_iterator(dir)) entries.push_back(e.path());
  REQUIRE(entries.size() == 1);
  return entries.front();
}

// Every file of a directory tree with its bytes, for "unchanged" checks.
std::vector<std::pair<std::string, std::string>> tree_of(const fs::path &root) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto &e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files.emplace_back(fs::relative(e.path(), root).string(), read_text(e.path()));
  std::sort(files.begin(), files.end());
  return files;
}

const Value &at(const Value &value, std::string_view key) {
  const Value *member = value.find(key);
  INFO("member " << key);
  REQUIRE(member != nullptr);
  return *member;
}

// The member at "a.b[2].c" (for editing a synthetic result).
Value &path_in(Value &root, std::string_view path) {
  Value *current = &root;
  while (!path.empty()) {
    const std::size_t dot = path.find('.');
    std::string_view step = path.substr(0, dot);
    path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
    const std::size_t bracket = step.find('[');
    current = current->as_object().find(step.substr(0, bracket));
    REQUIRE(current != nullptr);
    if (bracket != std::string_view::npos) {
      const auto index = static_cast<std::size_t>(std::stoul(std::string(step.substr(bracket + 1))));
      current = &current->as_array().at(index);
    }
  }
  return *current;
}

// n samples around median_ns, one per round; a few percent of spread.
Array samples(double median_ns, std::size_t n, bool with_clock, std::size_t slow_clock_at = 1000) {
  Array out;
  for (std::size_t k = 0; k < n; ++k) {
    const double wiggle = 1.0 + 0.004 * static_cast<double>(static_cast<int>(k % 5) - 2);
    Object s{{"round", static_cast<std::uint64_t>(k)}, {"ns", median_ns * wiggle + 0.5}};
    if (with_clock) s.set("smClockMHz", k == slow_clock_at ? 1500 : 1980);
    out.emplace_back(std::move(s));
  }
  return out;
}

Array errors(double relative) {
  Array out;
  const std::pair<const char *, std::int64_t> outputs[] = {
      {"loss", 1}, {"grad_student_input", 32 * 32}, {"grad_student_weight", 1000 * 32}};
  for (const auto &[output, count] : outputs)
    out.emplace_back(Object{{"output", output},
                            {"count", count},
                            {"maxAbsError", relative * 0.01},
                            {"relL2Error", relative},
                            {"refL2Norm", 10.4},
                            {"nonfinite", 0}});
  return out;
}

Object external_implementation(const std::string &name, double median_ns, bool with_clock) {
  return Object{{"name", name},
                {"kibenchImplementation", false},
                {"title", name + " (synthetic)"},
                {"description", "A synthetic external implementation for the import tests."},
                {"project", Object{{"name", name + "-project"}, {"version", "0.8.5"}}},
                {"callable", Object{{"language", "python"},
                                    {"path", "pkg/" + name + ".py"},
                                    {"symbol", "Loss"},
                                    {"interface", "torch.nn.Module"}}},
                {"software", Object{{"torch", "2.11.0+cu130"}, {"triton", "3.6.0"}}},
                {"stopReason", "noise_target"},
                {"samples", samples(median_ns, 20, with_clock, 3)},
                {"memory", Object{{"peakBytes", 900000},
                                  {"inputBytes", 300000},
                                  {"outputBytes", 100000},
                                  {"workspaceBytes", 500000}}},
                {"loss", 10.38},
                {"errors", errors(1e-3)}};
}

// A CPU `kibench run` of the small workload (cpu-reference, cpu-fp64: its
// oracle is cpu-fp64) and a synthetic result that matches it: cpu-reference
// again (a kibench implementation, its revision from the run directory),
// "liger" and "torch" as external ones.
struct Fixture {
  TempDir tmp;
  fs::path run_dir;
  fs::path result = tmp.path() / "result.json";
  fs::path out = tmp.path() / "imported";
  Value document;

  Fixture() {
    const auto run = run_kibench("run " + quoted(kSmall) + " --impl cpu-reference,cpu-fp64 --out " +
                                 quoted(tmp.path() / "runs") + " " + kQuick);
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    run_dir = only_entry(tmp.path() / "runs");
    Array inputs;
    for (const char *tensor :
         {"student_input", "student_weight", "teacher_input", "teacher_weight", "target"})
      inputs.emplace_back(Object{
          {"tensor", tensor}, {"file", std::string(tensor) + ".npy"}, {"sha256", std::string(64, 'a')}});
    Object reference{{"name", "cpu-reference"},
                     {"kibenchImplementation", true},
                     {"stopReason", "noise_target"},
                     {"samples", samples(1e6, 20, false)},
                     {"memory", Object{{"peakBytes", 800000},
                                       {"inputBytes", 300000},
                                       {"outputBytes", 100000},
                                       {"workspaceBytes", 400000}}},
                     {"loss", 10.39},
                     {"errors", errors(2e-3)}};
    // torch's harness could not read clocks: null, never flagged.
    Object torch = external_implementation("torch", 1.5e6, false);
    for (Value &sample : torch.find("samples")->as_array()) sample.as_object().set("smClockMHz", nullptr);
    document = Object{
        {"format", "kibench.dev/external-samples/v1"},
        {"invocation", kInvocation},
        {"harness", Object{{"name", "kibench-side-by-side"}, {"version", "0.1.0"}}},
        {"workloadDigest", kibench::manifest_digest(kibench::json::parse_file(run_dir / "workload.json"))},
        {"environmentDigest",
         kibench::manifest_digest(kibench::json::parse_file(run_dir / "environment.json"))},
        {"oracle", "cpu-fp64"},
        {"settings", Object{{"pass", "full"},
                            {"cold", false},
                            {"warmupRuns", 1},
                            {"minSamples", 10},
                            {"maxSamples", 40},
                            {"minTimeS", 0},
                            {"maxNoise", 0.005},
                            {"timeoutS", 60},
                            {"interleave", true},
                            {"throttleFraction", 0.95},
                            {"minimumEffect", 0.01},
                            {"timer", "steady_clock"}}},
        {"inputs", std::move(inputs)},
        {"implementations",
         Array{std::move(reference), external_implementation("liger", 2e6, true), std::move(torch)}}};
  }

  ProcessResult import(const std::string &extra = "") {
    std::ofstream(result, std::ios::binary | std::ios::trunc) << kibench::json::pretty(document) << "\n";
    return run_kibench("import external " + quoted(result) + " --like " + quoted(run_dir) + " --out " +
                       quoted(out) + (extra.empty() ? "" : " " + extra));
  }

  [[nodiscard]] fs::path imported_dir() const {
    return out /
           "2026-12-02T15-40-00.123Z-distill-jsd-loss-small-default-hidden64-tokens32-vocab1000-bf16-full-"
           "side-by-side";
  }
};

// Exit 2, one line on stderr naming the result file and the field, nothing
// written under the output root.
void check_refused(Fixture &f, const std::string &expected) {
  const auto r = f.import();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, StartsWith("kibench: " + f.result.string() + ": "));
  CHECK_THAT(r.err, Contains(expected));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(f.out));
}

Value json_of(const ProcessResult &result) {
  INFO(result.err);
  REQUIRE(result.exit_code <= 1);
  return kibench::json::parse(result.out, "stdout");
}

const Value *run_with_id(const Value &report, std::string_view id) {
  for (const Value &run : at(report, "runs").as_array())
    if (at(run, "id").as_string() == id) return &run;
  return nullptr;
}

} // namespace

TEST_CASE("import external writes a run directory that verifies and forms its own paired cohort",
          "[import][external]") {
  Fixture f;
  const auto before = tree_of(f.run_dir);
  const auto r = f.import();
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path dir = f.imported_dir();
  CHECK_THAT(r.out, Contains("3 runs by kibench-side-by-side 0.1.0 (invocation 2026-12-02T15:40:00.123Z)"));
  CHECK_THAT(r.out, Contains("  liger                       2.000 ms  passed"));
  CHECK_THAT(r.out, Contains("written: " + dir.string() + "/"));
  for (const char *name :
       {"operation.json", "workload.json", "environment.json", "protocol.json", "summary.json",
        "implementation.cpu-reference.json", "run.cpu-reference.json", "samples.cpu-reference.json",
        "implementation.liger.json", "run.liger.json", "samples.liger.json", "implementation.torch.json",
        "run.torch.json", "samples.torch.json"})
    CHECK(fs::exists(dir / name));
  CHECK(only_entry(f.out) == dir); // no staging leftovers

  SECTION("the run directory it names is left as it was, and its manifests are copied verbatim") {
    CHECK(tree_of(f.run_dir) == before);
    for (const char *name :
         {"operation.json", "workload.json", "environment.json", "implementation.cpu-reference.json"})
      CHECK(read_text(dir / name) == read_text(f.run_dir / name));
  }
  SECTION("digest --verify passes and prints one comparison key") {
    const auto v = run_kibench("digest --verify " + quoted(dir));
    INFO(v.out << v.err);
    CHECK(v.exit_code == 0);
    CHECK_THAT(v.out, Contains("comparison key"));
    CHECK_THAT(v.out, !Contains("FAILED"));
  }
  SECTION("the protocol: kibench run's family and notes, the external harness's name and another digest") {
    const Value ours = kibench::json::parse_file(dir / "protocol.json");
    const Value theirs = kibench::json::parse_file(f.run_dir / "protocol.json");
    CHECK(kibench::json::string_at(ours, "spec.comparability.family") ==
          kibench::json::string_at(theirs, "spec.comparability.family"));
    CHECK(kibench::json::string_at(ours, "spec.comparability.family") == "kibench_steady_clock_hot_full");
    CHECK(kibench::json::string_at(ours, "spec.harness.name") == "kibench-side-by-side");
    CHECK(kibench::json::string_at(ours, "spec.harness.version") == "0.1.0");
    CHECK(kibench::json::string_at(ours, "metadata.name") == "kibench-side-by-side-steady-clock-hot-full");
    CHECK(kibench::manifest_digest(ours) != kibench::manifest_digest(theirs));
  }
  SECTION("runs: status, labels, invocation, throttle flags and the external revision") {
    const Value liger = kibench::json::parse_file(dir / "run.liger.json");
    CHECK(kibench::json::string_at(liger, "spec.status") == "passed");
    CHECK(kibench::json::string_at(liger, "spec.observedAt") == kInvocation);
    CHECK(kibench::json::string_at(liger, "metadata.labels.harness") == "kibench-side-by-side");
    CHECK(kibench::json::string_at(liger, "metadata.labels.implementation") == "liger");
    CHECK(kibench::json::string_at(liger, "metadata.labels.stop_reason") == "noise_target");
    CHECK_THAT(kibench::json::string_at(liger, "metadata.name"),
               StartsWith("kibench-side-by-side-liger-full-"));
    double throttled = -1;
    for (const Value &m : at(at(liger, "spec"), "measurements").as_array())
      if (at(m, "metric").as_string() == "throttled_samples") throttled = at(m, "value").as_number();
    CHECK(throttled == 1); // sample 3 ran at 1500 MHz, under 0.95 × 1980
    const Value raw = kibench::json::parse_file(dir / "samples.liger.json");
    CHECK(at(raw, "invocation").as_string() == kInvocation);
    CHECK(at(at(raw, "samples").as_array()[3], "throttled").as_bool());
    CHECK_FALSE(at(at(raw, "samples").as_array()[2], "throttled").as_bool());

    const Value revision = kibench::json::parse_file(dir / "implementation.liger.json");
    CHECK(kibench::json::string_at(revision, "spec.callable.interface") == "torch_nn_module");
    CHECK(kibench::json::string_at(revision, "spec.projectRevision.version") == "0.8.5");
    CHECK(kibench::json::string_at(revision, "spec.operation.specDigest") ==
          kibench::manifest_digest(kibench::json::parse_file(f.run_dir / "operation.json")));
    const Value &variant = at(at(revision, "spec"), "buildVariants").as_array().at(0);
    CHECK(kibench::json::string_at(variant, "requirements.torch") == "2.11.0+cu130");
  }
  SECTION("compare: the imported runs are one rankable, paired cohort") {
    const Value report = json_of(
        run_kibench("compare " + quoted(f.run_dir) + " " + quoted(dir) + " --format json --resamples 1000"));
    REQUIRE(at(report, "cohorts").as_array().size() == 2);
    const Value &imported = at(report, "cohorts").as_array()[1];
    const auto &members = at(imported, "members").as_array();
    REQUIRE(members.size() == 3);
    CHECK(at(imported, "profile").as_string() == "strict_exact");
    CHECK(at(imported, "baseline").as_string() == "cpu-reference[2]");
    const auto &ranking = at(imported, "ranking").as_array();
    REQUIRE(ranking.size() == 3);
    CHECK(at(ranking[0], "run").as_string() == "cpu-reference[2]");
    CHECK(at(ranking[1], "run").as_string() == "torch");
    CHECK(at(ranking[2], "run").as_string() == "liger");
    CHECK(at(ranking[2], "rank").as_number() == 3);
    const Value &versus = at(ranking[2], "vsBaseline");
    CHECK(at(versus, "pairing").as_string() == "paired");
    CHECK(at(versus, "verdict").as_string() == "slower");
    const Value *liger = run_with_id(report, "liger");
    REQUIRE(liger != nullptr);
    CHECK(at(at(*liger, "rawSamples"), "invocation").as_string() == kInvocation);

    SECTION("against kibench run's runs: PROTOCOL_INCOMPARABLE, viewed source_native") {
      const auto &views = at(report, "notComparable").as_array();
      REQUIRE(views.size() == 3);
      for (const Value &view : views) {
        INFO(kibench::json::pretty(view));
        CHECK(at(view, "against").as_string() == "cpu-reference[1]");
        CHECK(at(view, "profile").as_string() == "source_native");
        const auto &reasons = at(view, "reasons").as_array();
        REQUIRE(reasons.size() == 1);
        CHECK(at(reasons[0], "code").as_string() == "PROTOCOL_INCOMPARABLE");
      }
    }
  }
  SECTION("a name already taken gets a numbered one, as kibench run's do; the first is left alone") {
    const auto first = tree_of(dir);
    const auto again = f.import();
    INFO(again.err);
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.out, Contains("written: " + dir.string() + "-2/"));
    CHECK(tree_of(dir) == first);
    CHECK(fs::is_directory(dir.string() + "-2"));
  }
}

TEST_CASE("import external --json prints the runs with digests and comparison key", "[import][external]") {
  Fixture f;
  const Value summary = json_of(f.import("--json"));
  CHECK(at(summary, "directory").as_string() == f.imported_dir().string());
  CHECK(at(summary, "invocation").as_string() == kInvocation);
  const auto &runs = at(summary, "runs").as_array();
  REQUIRE(runs.size() == 3);
  CHECK(at(runs[0], "implementation").as_string() == "cpu-reference");
  CHECK(at(runs[0], "kibenchImplementation").as_bool());
  CHECK(at(runs[1], "status").as_string() == "passed");
  CHECK(at(runs[1], "medianMs").as_number() == Approx(2.0).epsilon(1e-3));
  CHECK(at(runs[1], "runDigest").as_string() ==
        kibench::manifest_digest(kibench::json::parse_file(f.imported_dir() / "run.liger.json")));
  CHECK(at(runs[0], "comparisonKey") == at(runs[2], "comparisonKey"));
}

TEST_CASE("import external: every imported manifest validates against the KernelIndex schemas",
          "[import][external][schema]") {
  Fixture f;
  REQUIRE(f.import().exit_code == 0);
  const auto result =
      run_command("/usr/bin/python3 " + quoted(kSource / "test/schema/validate.py") + " " +
                  quoted(kSource / "test/data/kernelindex/schemas") + " " + quoted(f.imported_dir()));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.out, Contains("10 manifests checked, 0 problems"));
}

TEST_CASE("import external: a failed check is recorded as incorrect_numerical and exits 1",
          "[import][external]") {
  Fixture f;
  path_in(f.document, "implementations[2].errors[2].relL2Error") = 0.5;
  const auto r = f.import();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Contains("incorrect_numerical"));
  const Value torch = kibench::json::parse_file(f.imported_dir() / "run.torch.json");
  CHECK(kibench::json::string_at(torch, "spec.status") == "incorrect_numerical");
  CHECK(at(at(at(torch, "spec"), "correctness"), "matchedRatio").as_number() == Approx(2.0 / 3.0));
  CHECK(run_kibench("digest --verify " + quoted(f.imported_dir())).exit_code == 0);

  const Value report = json_of(run_kibench("compare " + quoted(f.imported_dir()) + " --format json"));
  const Value &cohort = at(report, "cohorts").as_array().at(0);
  CHECK(at(cohort, "ranking").as_array().size() == 2);
  const auto &not_ranked = at(cohort, "notRanked").as_array();
  REQUIRE(not_ranked.size() == 1);
  CHECK(at(not_ranked[0], "run").as_string() == "torch");
  CHECK(at(at(not_ranked[0], "reasons").as_array().at(0), "code").as_string() == "STATUS_NOT_PASSED");
}

TEST_CASE("import external refuses a result whose digests are not the run directory's",
          "[import][external]") {
  Fixture f;
  const std::string actual = at(f.document, "workloadDigest").as_string();
  const std::string other = "sha256:" + std::string(64, '0');
  SECTION("workload") {
    path_in(f.document, "workloadDigest") = other;
    check_refused(f, "$.workloadDigest: " + other + " is not the digest of ");
    CHECK_THAT(f.import().err, Contains("workload.json (" + actual + ")"));
  }
  SECTION("environment") {
    path_in(f.document, "environmentDigest") = other;
    check_refused(f, "$.environmentDigest: " + other + " is not the digest of ");
  }
}

TEST_CASE("import external names every missing required field, exits 2 and writes nothing",
          "[import][external]") {
  // {object path, member}: implementations[0] is a kibench implementation,
  // [1] an external one, whose description is required too.
  const std::vector<std::pair<std::string, std::string>> required{
      {"", "format"},
      {"", "invocation"},
      {"", "harness"},
      {"harness", "name"},
      {"harness", "version"},
      {"", "workloadDigest"},
      {"", "environmentDigest"},
      {"", "oracle"},
      {"", "settings"},
      {"settings", "pass"},
      {"settings", "cold"},
      {"settings", "warmupRuns"},
      {"settings", "minSamples"},
      {"settings", "maxSamples"},
      {"settings", "minTimeS"},
      {"settings", "maxNoise"},
      {"settings", "timeoutS"},
      {"settings", "interleave"},
      {"settings", "throttleFraction"},
      {"settings", "minimumEffect"},
      {"settings", "timer"},
      {"", "inputs"},
      {"inputs[0]", "tensor"},
      {"inputs[0]", "file"},
      {"inputs[0]", "sha256"},
      {"", "implementations"},
      {"implementations[0]", "name"},
      {"implementations[0]", "kibenchImplementation"},
      {"implementations[0]", "stopReason"},
      {"implementations[0]", "samples"},
      {"implementations[0]", "memory"},
      {"implementations[0]", "loss"},
      {"implementations[0]", "errors"},
      {"implementations[0].samples[4]", "round"},
      {"implementations[0].samples[4]", "ns"},
      {"implementations[0].memory", "peakBytes"},
      {"implementations[0].memory", "inputBytes"},
      {"implementations[0].memory", "outputBytes"},
      {"implementations[0].memory", "workspaceBytes"},
      {"implementations[0].errors[1]", "output"},
      {"implementations[0].errors[1]", "count"},
      {"implementations[0].errors[1]", "maxAbsError"},
      {"implementations[0].errors[1]", "relL2Error"},
      {"implementations[0].errors[1]", "refL2Norm"},
      {"implementations[0].errors[1]", "nonfinite"},
      {"implementations[1]", "title"},
      {"implementations[1]", "description"},
      {"implementations[1]", "project"},
      {"implementations[1]", "callable"},
      {"implementations[1]", "software"},
      {"implementations[1].project", "name"},
      {"implementations[1].project", "version"},
      {"implementations[1].callable", "language"},
      {"implementations[1].callable", "path"},
      {"implementations[1].callable", "symbol"},
      {"implementations[1].callable", "interface"},
  };
  Fixture f;
  const Value original = f.document;
  for (const auto &[parent, member] : required) {
    f.document = original;
    Value &object = parent.empty() ? f.document : path_in(f.document, parent);
    REQUIRE(object.as_object().erase(member));
    const std::string where = parent.empty() ? "$" : "$." + parent;
    INFO(where << "." << member);
    check_refused(f, where + ": missing required field \"" + member + "\"");
  }
}

TEST_CASE("import external names the field of a bad value", "[import][external]") {
  Fixture f;
  struct Case {
    std::string path;
    Value value;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"format", "kibench.dev/raw-samples/v1", "$.format: "},
      {"invocation", "2026-02-30T10:00:00.000Z", "$.invocation: "},
      {"harness.name", "kibench", "$.harness.name: \"kibench\" is kibench run's own harness"},
      {"settings.pass", "sideways", "$.settings.pass: \"sideways\" is not forward, backward or full"},
      {"settings.timer", "perf_counter", "$.settings.timer: "},
      {"settings.maxSamples", 5, "$.settings.maxSamples: 5 is less than minSamples (10)"},
      {"oracle", "oracle-fp64", "$.oracle: \"oracle-fp64\", but "},
      {"inputs[4].tensor", "student_bias",
       "$.inputs[4].tensor: \"student_bias\" is not a tensor of workload"},
      {"implementations[1].name", "cpu-reference", "$.implementations[1].name: \"cpu-reference\" is already"},
      {"implementations[1].name", "Liger", "$.implementations[1].name: \"Liger\" is not a name"},
      {"implementations[1].samples[3].ns", -1,
       "$.implementations[1].samples[3].ns: expected a positive finite number"},
      {"implementations[1].samples[3].round", 2,
       "$.implementations[1].samples[3].round: round 2 after round 2"},
      {"implementations[1].samples[3].smClockMHz", "fast", "$.implementations[1].samples[3].smClockMHz: "},
      {"implementations[1].stopReason", "max_samples",
       "$.implementations[1].stopReason: max_samples with 20"},
      {"implementations[1].stopReason", "bored", "$.implementations[1].stopReason: \"bored\" is not"},
      {"implementations[1].errors[2].output", "grad_student_bias",
       "$.implementations[1].errors[2].output: \"grad_student_bias\" is not an output a full-pass check"},
      {"implementations[1].errors[2].output", "loss",
       "$.implementations[1].errors[2].output: output \"loss\" is listed twice"},
      {"implementations[1].errors[0].count", 1.5,
       "$.implementations[1].errors[0].count: expected an integer"},
      {"implementations[1].memory.peakBytes", -3, "$.implementations[1].memory.peakBytes: "},
      {"implementations[1].software", Object{{"liger-kernel", "0.8.5"}},
       "$.implementations[1].software.liger-kernel: package name"},
      {"implementations[1].callable.interface", "::", "$.implementations[1].callable.interface: "},
      {"implementations[1].kibenchImplementation", true,
       "$.implementations[1].kibenchImplementation: true, but "},
      {"settings.cold", "no", "$.settings.cold: expected a boolean, got string"},
  };
  SECTION("each bad value, alone") {
    const Value original = f.document;
    for (const Case &c : cases) {
      f.document = original;
      path_in(f.document, c.path) = c.value;
      INFO(c.path);
      check_refused(f, c.expected);
    }
  }
  SECTION("a missing output of the check") {
    path_in(f.document, "implementations[1].errors").as_array().pop_back();
    check_refused(f, "$.implementations[1].errors: no entry for output \"grad_student_weight\"");
  }
  SECTION("a missing input tensor") {
    path_in(f.document, "inputs").as_array().pop_back();
    check_refused(f, "$.inputs: no entry for tensor \"target\"");
  }
  SECTION("an unknown member") {
    path_in(f.document, "settings").as_object().set("warmup", 3);
    check_refused(f, "$.settings: unknown field \"warmup\"");
  }
  SECTION("not JSON") {
    std::ofstream(f.result, std::ios::trunc) << "{\"format\": ";
    const auto r = run_kibench("import external " + quoted(f.result) + " --like " + quoted(f.run_dir) +
                               " --out " + quoted(f.out));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(f.result.string() + ": "));
    CHECK_FALSE(fs::exists(f.out));
  }
}

TEST_CASE("import external bounds every duration it reads", "[import][external]") {
  Fixture f;
  struct Case {
    std::string path;
    Value value;
    std::string expected;
  };
  // A sample of 1e19 ns was accepted and written as maximum
  // -9223372036854776000, leaving a directory nothing could read.
  const std::vector<Case> cases{
      {"implementations[1].samples[3].ns", 1e19,
       "$.implementations[1].samples[3].ns: 1e+19 ns is longer than the 9007199254740991 ns allowed"},
      {"implementations[0].samples[0].ns", 9007199254740993.0, "$.implementations[0].samples[0].ns: "},
      {"settings.timeoutS", 1e10, "$.settings.timeoutS: 10000000000 s is longer than the 86400 s allowed"},
      {"settings.minTimeS", 1e300, "$.settings.minTimeS: 1e+300 s is longer than the 86400 s allowed"},
  };
  const Value original = f.document;
  for (const Case &c : cases) {
    f.document = original;
    path_in(f.document, c.path) = c.value;
    INFO(c.path);
    check_refused(f, c.expected);
  }
  // At the bound itself the import goes through.
  f.document = original;
  path_in(f.document, "settings.timeoutS") = 86400;
  const auto r = f.import();
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("the shared run-file writer reproduces kibench run's CI baseline byte for byte", "[import][run]") {
  // An H200 `kibench run` (ci/baselines/h200): each implementation's files
  // and the summary are rebuilt from what the directory records and must
  // come out identical, as must the protocol from default settings.
  const fs::path baseline = only_entry(kSource / "ci/baselines/h200");
  const Value workload_manifest = kibench::json::parse_file(baseline / "workload.json");
  const kibench::Workload workload = kibench::workload_from_json(
      workload_manifest, kibench::json::parse_file(baseline / "operation.json"), baseline / "workload.json");

  kibench::ProtocolSettings settings;
  settings.timer = "cuda_events";
  settings.share_rounds = kibench::kShareRoundsByDefault; // kibench run's default
  settings.sustained_rounds = 1;                           // the sustained phase when it was recorded
  const Value protocol = kibench::protocol_manifest(settings, "oracle-fp64", workload.correctness);
  CHECK(kibench::json_file_text(protocol) == read_text(baseline / "protocol.json"));

  TempDir tmp;
  kibench::io::StagedDirectory dir(tmp.path() / "rebuilt");
  kibench::RunDirectoryContext context;
  context.workload = &workload;
  context.pass = kibench::Pass::full;
  context.workload_digest = kibench::manifest_digest(workload_manifest);
  context.protocol_digest = kibench::manifest_digest(protocol);
  context.environment_digest =
      kibench::manifest_digest(kibench::json::parse_file(baseline / "environment.json"));

  const Value summary = kibench::json::parse_file(baseline / "summary.json");
  kibench::WorkloadOutcome outcome;
  outcome.workload = workload;
  outcome.oracle = at(summary, "oracle").as_string();
  outcome.oracle_loss = at(summary, "oracleLoss").as_number();
  for (const Value &row : at(summary, "implementations").as_array()) {
    kibench::ImplementationFacts o;
    o.name = at(row, "implementation").as_string();
    const auto status = kibench::run_status_from_string(at(row, "status").as_string());
    REQUIRE(status);
    o.status = *status;
    const std::string samples_file = "samples." + o.name + ".json";
    o.measurement = kibench::read_raw_samples(kibench::json::parse_file(baseline / samples_file),
                                              samples_file, &context.observed_at);
    // The throttle rule, shared with imports, gives the flags kibench run
    // recorded.
    kibench::Measurement reflagged = o.measurement;
    for (auto &s : reflagged.samples) s.throttled = !s.throttled;
    kibench::flag_throttled(reflagged, settings.throttle_fraction);
    for (std::size_t k = 0; k < reflagged.samples.size(); ++k)
      CHECK(reflagged.samples[k].throttled == o.measurement.samples[k].throttled);
    if (const Value *sustained = row.find("sustained")) {
      // The baseline's sustained phase ran one round (the protocol's
      // description says so).
      kibench::SustainedRound round;
      round.warmup_invocations = static_cast<std::size_t>(at(*sustained, "warmupInvocations").as_number());
      round.invocations = static_cast<std::size_t>(at(*sustained, "invocations").as_number());
      round.latency_ns = at(*sustained, "latencyNs").as_number();
      if (sustained->find("powerW") != nullptr) {
        kibench::PowerSummary power;
        power.power_w = at(*sustained, "powerW").as_number();
        power.window_s = at(*sustained, "powerWindowS").as_number();
        power.steps = static_cast<std::size_t>(at(*sustained, "counterSteps").as_number());
        if (const Value *clock = sustained->find("smClockMhz")) power.sm_clock_mhz = clock->as_number();
        round.power = power;
      }
      o.measurement.sustained =
          kibench::combine_sustained_rounds({round}, at(*sustained, "monitor").as_string());
    }
    o.memory.peak_bytes = static_cast<std::uint64_t>(at(row, "peakBytes").as_number());
    o.memory.workspace_bytes = static_cast<std::uint64_t>(at(row, "workspaceBytes").as_number());
    if (const Value *errors = row.find("errors")) {
      kibench::CorrectnessVerdict verdict;
      verdict.passed = true;
      for (const auto &[output, e] : errors->as_object()) {
        kibench::ErrorStats stats;
        stats.output = output;
        stats.rel_l2_error = at(e, "relL2").as_number();
        stats.max_abs_error = at(e, "maxAbs").as_number();
        // The summary keeps no reference norms; every output of this run
        // was judged on its relative error (its reference was not zero).
        stats.ref_l2_norm = 1.0;
        stats.passed = at(e, "passed").as_bool();
        verdict.passed = verdict.passed && stats.passed;
        verdict.outputs.push_back(stats);
      }
      o.verdict = verdict;
      o.loss = at(row, "loss").as_number();
    }
    // The implementation's own run labels (the chunk plan, the GEMM
    // algorithms): what is left of the recorded labels once the harness's
    // are taken out; the writer puts the harness's back first.
    const Value recorded = kibench::json::parse_file(baseline / ("run." + o.name + ".json"));
    if (const Value *labels = recorded.find("metadata")->find("labels"))
      for (const auto &[key, value] : labels->as_object())
        if (key != "implementation" && key != "pass" && key != "stop_reason" && key != "power_monitor")
          o.labels.set(key, value);
    const std::string revision_file = "implementation." + o.name + ".json";
    const std::string revision = read_text(baseline / revision_file);
    const kibench::ImplementationResult result = kibench::summarize(o.measurement, workload, context.pass);
    const std::string run_digest = kibench::write_implementation_files(
        dir, context, revision, kibench::manifest_digest(kibench::json::parse(revision, revision_file)), o,
        result);
    CHECK(run_digest == at(row, "runDigest").as_string());
    outcome.implementations.push_back({std::move(o), result, run_digest});
  }
  REQUIRE(outcome.implementations.size() >= 3);
  dir.write("summary.json", kibench::json_file_text(kibench::outcome_summary(outcome)));
  dir.commit();
  const auto rebuilt = tree_of(tmp.path() / "rebuilt");
  // implementation, run and samples files for each, and the summary.
  CHECK(rebuilt.size() == 3 * outcome.implementations.size() + 1);
  for (const auto &[name, bytes] : rebuilt) {
    INFO(name);
    CHECK(bytes == read_text(baseline / name));
  }
}

TEST_CASE("import external refuses a 50 000-character package name in one line, not a crash",
          "[import][external][text-rules]") {
  Fixture f;
  // Checked against std::regex when the manifest was built: SIGSEGV.
  path_in(f.document, "implementations[1].software") = Object{{std::string(50000, 'k'), "1.0"}};
  const auto r = f.import();
  INFO(r.err.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("(50000 bytes)"));
  CHECK_THAT(r.err, Contains("is not [a-z][a-z0-9_]* of at most 100 characters"));
  CHECK(r.err.size() < 600);
  CHECK_FALSE(fs::exists(f.out));
}

TEST_CASE("import external takes only what kibench run would take", "[import][external][ranges]") {
  Fixture f;
  struct Case {
    std::string path;
    Value value;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"implementations[1].samples[3].ns", 0.4,
       "$.implementations[1].samples[3].ns: 0.4 ns is shorter than 1 ns"},
      {"implementations[1].samples[5].smClockMHz", 1e300,
       "$.implementations[1].samples[5].smClockMHz: 1e+300 MHz is above the 100000 MHz"},
      {"settings.warmupRuns", 1e15, "$.settings.warmupRuns: "},
      {"settings.maxSamples", 1e15, "$.settings.maxSamples: "},
      {"settings.minSamples", 100001, "$.settings.minSamples: "},
      {"settings.maxNoise", 1e300, "$.settings.maxNoise: 1e+300 is above the 0.2"},
      {"implementations[1].memory.workspaceBytes", 1000000,
       "$.implementations[1].memory.workspaceBytes: 1000000 is more than peakBytes (900000)"},
  };
  const Value original = f.document;
  for (const Case &c : cases) {
    f.document = original;
    path_in(f.document, c.path) = c.value;
    INFO(c.path);
    check_refused(f, c.expected);
  }
  // The ends of the ranges are taken.
  f.document = original;
  path_in(f.document, "settings.maxNoise") = 0.2;
  path_in(f.document, "implementations[1].samples[3].ns") = 1;
  path_in(f.document, "implementations[1].memory.workspaceBytes") = 900000;
  const auto r = f.import();
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("concurrent imports into one --out each get a directory, as kibench run's do",
          "[import][external][concurrent]") {
  Fixture f;
  std::ofstream(f.result, std::ios::binary | std::ios::trunc) << kibench::json::pretty(f.document) << "\n";
  // Four at once: before, all but one lost the rename with exit 3 ("File exists").
  std::string script = "status=0; for k in 1 2 3 4; do ( '" + std::string(KIBENCH_BINARY) + "' import external " +
                       quoted(f.result) + " --like " + quoted(f.run_dir) + " --out " + quoted(f.out) +
                       " >/dev/null 2>&1 || echo failed $? ) & done; wait";
  const auto r = run_command(script);
  INFO(r.out << r.err);
  CHECK(r.out.empty());
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(f.out)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  const std::string base = f.imported_dir().filename().string();
  CHECK(names == std::vector<std::string>{base, base + "-2", base + "-3", base + "-4"});
}
