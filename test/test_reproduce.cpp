// kibench reproduce (lib/reproduce/, docs/reproduce.md): a kibench run
// directory reproduced here (the same SKU: reproduced or
// could_not_reproduce, by the rule), a record without raw samples (a
// verdict without an interval, saying so), the seed record and a record of
// `kibench import liger` (resolved to their Python lanes; on this machine
// refused, saying why, and judged against a CPU run through the same
// verdict code), the attestation body against KernelIndex's published
// request schema, and every refusal of bad input (exit 2, one line naming
// the field, nothing written).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/machine/backend.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/digest/digest.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/reproduce/attestation.hpp"
#include "lib/reproduce/original_run.hpp"
#include "lib/reproduce/resolve.hpp"
#include "lib/reproduce/verdict.hpp"
#include "lib/run/backend.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using kibench::json::string_at;
using namespace kibench::test;

namespace {

const fs::path kSource = kibench::test::kSourceDir;
const fs::path kSeedRecord = kSource / "test/data/seed/seed-record.json";
const fs::path kLigerRows = kSource / "test/data/liger/jsd-family-rows.csv";
const fs::path kSchema = kSource / "test/schema/kernelindex-attestation-request.schema.json";
const std::string kSampling = "--min-samples 10 --max-samples 10 --min-time 0 --warmup 1 --sustained 0";

kibench::json::Value read_json(const fs::path &file) {
  return kibench::json::parse_file(file);
}

void write_json(const fs::path &file, const kibench::json::Value &value) {
  std::ofstream(file) << kibench::json::pretty(value) << "\n";
}

kibench::json::Value &member(kibench::json::Value &value, std::string_view key) {
  kibench::json::Value *found = value.as_object().find(key);
  REQUIRE(found != nullptr);
  return *found;
}

// `edit` on every tensor of a WorkloadCase.
template <typename Edit> void for_each_tensor(kibench::json::Value &workload, Edit edit) {
  auto &tensors = member(member(workload, "spec"), "tensors").as_object();
  std::vector<std::string> names;
  for (const auto &[name, tensor] : tensors) names.push_back(name);
  for (const auto &name : names) edit(tensors.find(name)->as_object());
}

// The one subfolder of `folder` (a reproduction writes exactly one).
fs::path only_directory(const fs::path &folder) {
  const auto dirs = kibench::test::directories_in(folder);
  REQUIRE(dirs.size() == 1);
  return dirs.front();
}

// validate_attestation.py over reproduction directories: 0 when each
// attestation.json is KernelIndex's request body.
kibench::test::ProcessResult validate(const std::vector<fs::path> &directories) {
  std::string command =
      "/usr/bin/python3 " + quoted(kSource / "test/schema/validate_attestation.py") + " " + quoted(kSchema);
  for (const auto &d : directories) command += " " + quoted(d);
  return run_command(command);
}

// `kibench import liger` of the JSD family rows into `out`; the record
// directory whose name starts with `prefix`.
fs::path imported_record(const fs::path &out, const std::string &prefix) {
  const auto imported = run_kibench("import liger " + quoted(kLigerRows) + " --out " + quoted(out));
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  for (const auto &dir : kibench::test::directories_in(out))
    if (dir.filename().string().starts_with(prefix)) return dir;
  FAIL("no imported record " << prefix);
  return {};
}

// The error line: exactly one, and nothing on stdout.
std::string one_line_error(const kibench::test::ProcessResult &r) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  return r.err;
}

// The rule of docs/reproduce.md, applied to a verdict's own numbers.
void check_rule(const kibench::json::Value &verdict) {
  const double tolerance = member(const_cast<kibench::json::Value &>(verdict), "tolerance").as_number();
  const kibench::json::Value *low = kibench::json::member_at(verdict, "ratio.low");
  const kibench::json::Value *high = kibench::json::member_at(verdict, "ratio.high");
  const kibench::json::Value *estimate = kibench::json::member_at(verdict, "ratio.estimate");
  REQUIRE(estimate != nullptr);
  const double deviation = low->is_number()
                               ? std::max(std::fabs(low->as_number() - 1), std::fabs(high->as_number() - 1))
                               : std::fabs(estimate->as_number() - 1);
  CHECK(kibench::json::member_at(verdict, "deviation")->as_number() == Approx(deviation));
  const std::string expected = deviation <= tolerance ? "reproduced" : "could_not_reproduce";
  CHECK(string_at(verdict, "type") == expected);
  if (expected == "reproduced") CHECK_THAT(string_at(verdict, "statement"), Contains("reproduced within"));
}

// A known list as `python -m kibench` offers it: the built-ins and the
// Python lanes.
std::vector<kibench::ImplementationEntry> known_with_python_lanes() {
  auto known = kibench::make_backend()->implementations();
  for (const char *lane : {"torch-eager", "liger", "torch-eager-jsd", "liger-jsd", "torch-eager-jsd-script",
                           "liger-jsd-script"})
    known.push_back({lane, "a Python lane", true, false});
  return known;
}

// A CPU run here, as make_verdict takes it.
struct CpuRun {
  TempDir dir;
  fs::path run_dir;
  std::vector<kibench::compare::ComparedRun> runs;
  kibench::reproduce::HereRun here;
  CpuRun() {
    run_dir = kibench::test::quick_run_with(dir.path(), "--min-samples 10 --max-samples 10 --sustained 0");
    runs = kibench::compare::load_runs({run_dir});
    REQUIRE(runs.size() == 1);
    here.run = &runs.front();
    here.implementation = read_json(run_dir / "implementation.cpu-reference.json");
    here.workload = read_json(run_dir / "workload.json");
    here.run_directory = run_dir.filename().string();
  }
};

// verdict.json and attestation.json of `verdict` into `dir`, as
// reproduce_records writes them.
void write_outputs(const fs::path &dir, const kibench::reproduce::Verdict &verdict) {
  fs::create_directories(dir);
  write_json(dir / "verdict.json", kibench::reproduce::verdict_json(verdict));
  write_json(dir / "attestation.json", kibench::reproduce::attestation_body(verdict, ""));
}

} // namespace

TEST_CASE("reproduce: a kibench run directory on the same machine is judged by the rule", "[reproduce]") {
  TempDir tmp;
  const fs::path original =
      kibench::test::quick_run_with(tmp.path() / "runs", "--min-samples 10 --max-samples 10 --sustained 0");
  const auto r =
      run_kibench("reproduce " + quoted(original) + " --out " + quoted(tmp.path() / "out") + " " + kSampling);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path dir = only_directory(tmp.path() / "out");
  CHECK_THAT(r.out, Contains("POST /runs/sha256:"));
  CHECK_THAT(r.out, Contains("written: "));

  const auto verdict = read_json(dir / "verdict.json");
  const auto attestation = read_json(dir / "attestation.json");
  const std::string original_digest =
      kibench::manifest_digest(read_json(original / "run.cpu-reference.json"));
  CHECK(string_at(verdict, "attestation.idOrDigest") == original_digest);
  CHECK_THAT(r.out, Contains("POST /runs/" + original_digest + "/attestations"));
  CHECK(kibench::json::member_at(verdict, "equivalentEnvironment")->as_bool());
  CHECK(string_at(verdict, "resolved.implementation") == "cpu-reference");
  CHECK(string_at(verdict, "resolved.pass") == "full");
  // Raw samples on both sides: an interval around the estimate.
  const double low = kibench::json::member_at(verdict, "ratio.low")->as_number();
  const double high = kibench::json::member_at(verdict, "ratio.high")->as_number();
  const double estimate = kibench::json::member_at(verdict, "ratio.estimate")->as_number();
  CHECK(low <= estimate);
  CHECK(estimate <= high);
  CHECK_THAT(string_at(verdict, "ratio.interval"), Contains("bootstrap"));
  check_rule(verdict);
  CHECK(string_at(attestation, "type") == string_at(verdict, "type"));
  // The one setting that differs (warm-up 0 there, 1 here), named field by
  // field in the verdict and the body.
  const auto &protocol = kibench::json::member_at(verdict, "differences.protocol")->as_array();
  REQUIRE(protocol.size() == 1);
  CHECK(string_at(protocol.front(), "field") == "measurement.warmupIterations");
  CHECK(string_at(protocol.front(), "original") == "0");
  CHECK(string_at(protocol.front(), "here") == "1");
  CHECK_THAT(string_at(attestation, "body"),
             Contains("Protocol differs: measurement.warmupIterations 0 ≠ 1"));
  CHECK(kibench::json::member_at(verdict, "differences.environment")->as_array().empty());
  CHECK(kibench::json::member_at(attestation, "observedNs")->as_number() ==
        kibench::json::member_at(verdict, "here.medianNs")->as_number());

  // The run written here names the run it reproduces, and verifies.
  const fs::path run_dir = dir / string_at(verdict, "runDirectory");
  const auto run = read_json(run_dir / "run.cpu-reference.json");
  CHECK(string_at(run, "metadata.labels.reproduces_run") == original_digest);
  const auto verify = run_kibench("digest --verify " + quoted(run_dir));
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
  // The ratio is of the two runs' medians, as their manifests report them.
  const double here_ns = kibench::json::member_at(run, "spec.timing.latencyNs.median")->as_number();
  const double original_ns =
      kibench::json::member_at(read_json(original / "run.cpu-reference.json"), "spec.timing.latencyNs.median")
          ->as_number();
  CHECK(estimate == Approx(here_ns / original_ns).epsilon(1e-6));

  const auto valid = validate({dir});
  INFO(valid.out);
  CHECK(valid.exit_code == 0);
}

TEST_CASE("reproduce: a record without raw samples gets a verdict without an interval, saying so",
          "[reproduce]") {
  TempDir tmp;
  const fs::path original =
      kibench::test::quick_run_with(tmp.path() / "runs", "--min-samples 10 --max-samples 10 --sustained 0");
  // The same record, its raw samples not published.
  auto run = read_json(original / "run.cpu-reference.json");
  member(member(member(run, "spec"), "timing"), "rawSamples");
  member(member(run, "spec"), "timing").as_object().erase("rawSamples");
  fs::remove(original / "samples.cpu-reference.json");
  write_json(original / "run.cpu-reference.json", run);
  const auto r = run_kibench("reproduce " + quoted(original / "run.cpu-reference.json") + " --out " +
                             quoted(tmp.path() / "out") + " " + kSampling);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path dir = only_directory(tmp.path() / "out");
  const auto verdict = read_json(dir / "verdict.json");
  CHECK(kibench::json::member_at(verdict, "ratio.low")->is_null());
  CHECK(kibench::json::member_at(verdict, "ratio.high")->is_null());
  CHECK_THAT(
      string_at(verdict, "ratio.interval"),
      Contains(
          "no interval, the record has none to resample: no raw samples (spec.timing.rawSamples absent)"));
  CHECK_THAT(
      r.out,
      Contains(
          "no interval, the record has none to resample: no raw samples (spec.timing.rawSamples absent)"));
  CHECK(string_at(verdict, "attestation.idOrDigest") == kibench::manifest_digest(run));
  check_rule(verdict);
  const auto valid = validate({dir});
  INFO(valid.out);
  CHECK(valid.exit_code == 0);
}

TEST_CASE("reproduce: the verdict's rule, type by type", "[reproduce]") {
  CpuRun cpu;
  TempDir tmp;
  const auto originals = kibench::reproduce::read_originals({cpu.run_dir});
  REQUIRE(originals.size() == 1);
  const auto resolved =
      kibench::reproduce::resolve(originals.front(), kibench::make_backend()->implementations());
  const kibench::stats::BootstrapSettings bootstrap;

  SECTION("steady samples 2 % apart: reproduced within 2.0 % at 5 %, not at 1 %") {
    auto original = originals.front();
    for (auto &sample : original.raw->samples) sample.ns = 1e6;
    original.median_ns = 1e6;
    auto steady = cpu.runs.front();
    for (auto &sample : steady.raw->samples) sample.ns = 1.02e6;
    steady.median_ns = 1.02e6;
    auto here = cpu.here;
    here.run = &steady;
    const auto v = kibench::reproduce::make_verdict(original, resolved, here, 0.05, bootstrap);
    CHECK(v.equivalent_environment);
    REQUIRE(v.ratio_interval);
    CHECK(v.ratio_interval->low == Approx(1.02));
    CHECK(v.ratio_interval->high == Approx(1.02));
    CHECK(v.type == kibench::reproduce::AttestationType::reproduced);
    CHECK(v.statement == "reproduced within 2.0 %");
    // The same code and data: no difference but the run itself.
    CHECK(v.differences.count() == 0);
    const auto strict = kibench::reproduce::make_verdict(original, resolved, here, 0.01, bootstrap);
    CHECK(strict.type == kibench::reproduce::AttestationType::could_not_reproduce);
    CHECK(strict.statement == "not reproduced: up to 2.0 % from the original, beyond the 1.0 % tolerance");
  }
  SECTION("every sample here twice as slow: could_not_reproduce, beyond the tolerance") {
    // Samples with a fixed 4 % spread, not the CPU run's own: a loaded machine's samples can spread
    // by 2× themselves, and then no interval could tell twice as slow from the same.
    auto original = originals.front();
    for (std::size_t i = 0; i < original.raw->samples.size(); ++i)
      original.raw->samples[i].ns = 1e6 * (1.0 + 0.01 * static_cast<double>(i % 5));
    original.median_ns = 1.02e6;
    auto slow = cpu.runs.front();
    for (std::size_t i = 0; i < slow.raw->samples.size(); ++i)
      slow.raw->samples[i].ns = 2e6 * (1.0 + 0.01 * static_cast<double>(i % 5));
    slow.median_ns = 2.04e6;
    auto here = cpu.here;
    here.run = &slow;
    const auto v = kibench::reproduce::make_verdict(original, resolved, here, 0.05, bootstrap);
    CHECK(*v.ratio == Approx(2.0));
    REQUIRE(v.ratio_interval);
    CHECK(v.ratio_interval->low > 1.05);
    CHECK(*v.deviation == Approx(v.ratio_interval->high - 1.0));
    CHECK(v.type == kibench::reproduce::AttestationType::could_not_reproduce);
    CHECK_THAT(v.statement, Contains("not reproduced: up to"));
    write_outputs(tmp.path() / "slow", v);
    CHECK(validate({tmp.path() / "slow"}).exit_code == 0);
  }
  SECTION("another SKU: an environment note, never a claim") {
    auto other = cpu.runs.front();
    auto &hardware = member(member(other.environment, "spec"), "hardware");
    hardware.as_object().set("product", "NVIDIA H200");
    hardware.as_object().set("vendor", "nvidia");
    auto here = cpu.here;
    here.run = &other;
    const auto v = kibench::reproduce::make_verdict(originals.front(), resolved, here, 0.05, bootstrap);
    CHECK_FALSE(v.equivalent_environment);
    CHECK(v.type == kibench::reproduce::AttestationType::environment_note);
    CHECK_THAT(v.statement, Contains("measured on another environment"));
    REQUIRE(!v.differences.environment.empty());
    CHECK(v.differences.environment.front().field == "hardware.vendor");
  }
  SECTION("a run here that failed: could_not_reproduce, without observedNs") {
    // As run_session records a lane that raised: a run with its status, no timing.
    auto failed = cpu.runs.front();
    failed.status = kibench::RunStatus::runtime_error;
    failed.median_ns.reset();
    failed.raw.reset();
    auto here = cpu.here;
    here.run = &failed;
    here.failure = "raised an error";
    const auto v = kibench::reproduce::make_verdict(originals.front(), resolved, here, 0.05, bootstrap);
    CHECK(v.type == kibench::reproduce::AttestationType::could_not_reproduce);
    const auto body = kibench::reproduce::attestation_body(v, "");
    CHECK(body.find("observedNs") == nullptr);
    write_outputs(tmp.path() / "failed", v);
    CHECK(validate({tmp.path() / "failed"}).exit_code == 0);
  }
}

TEST_CASE("reproduce: the seed record resolves to torch-eager on the seed workload, and says why it cannot "
          "run here",
          "[reproduce]") {
  TempDir tmp;
  // Through the kibench executable: torch-eager is a Python lane.
  const auto plain = run_kibench("reproduce " + quoted(kSeedRecord) + " --out " + quoted(tmp.path() / "out"));
  const std::string line = one_line_error(plain);
  CHECK_THAT(line, Contains("seed-record.json#run: spec.implementationDigest: torch-eager"));
  CHECK_THAT(line, Contains("python -m kibench reproduce"));
  CHECK_FALSE(fs::exists(tmp.path() / "out"));

  // Resolved as `python -m kibench` offers the lanes.
  const auto originals = kibench::reproduce::read_originals({kSeedRecord});
  REQUIRE(originals.size() == 1);
  const auto &seed = originals.front();
  // Its digest is the run page's (sha256:04bb56fcc59a16aba8848d8...).
  CHECK(seed.digest.starts_with("sha256:04bb56fcc59a16aba8848d8"));
  CHECK_FALSE(seed.raw);
  CHECK(seed.median_ns == Approx(213159866));
  const auto resolved = kibench::reproduce::resolve(seed, known_with_python_lanes());
  CHECK(resolved.implementation == "torch-eager");
  CHECK(resolved.pass == kibench::Pass::full);
  CHECK(resolved.workload_file.filename() == "seed-distill-jsd-h4096-t8192-v128256.json");
  CHECK(resolved.axes.empty());
  CHECK(resolved.workload.tokens == 8192);
  CHECK(resolved.workload.vocab == 128256);
  CHECK(resolved.workload.hidden == 4096);

  // Judged against a CPU run by the same code: another environment, no
  // interval (the record has no raw samples), and an attestation the API accepts.
  CpuRun cpu;
  const auto v = kibench::reproduce::make_verdict(seed, resolved, cpu.here, 0.05, {});
  CHECK(v.type == kibench::reproduce::AttestationType::environment_note);
  CHECK(v.original.sku == "NVIDIA H100 80GB HBM3");
  CHECK_FALSE(v.ratio_interval);
  CHECK_THAT(v.interval_note, Contains("no raw samples"));
  write_outputs(tmp.path() / "seed", v);
  const auto valid = validate({tmp.path() / "seed"});
  INFO(valid.out);
  CHECK(valid.exit_code == 0);

  // Through `python -m kibench` (the lanes handed in): refused, saying why.
  const fs::path capi = fs::path(KIBENCH_BINARY).parent_path() / "libkibench_capi.so";
  if (!fs::exists(capi)) {
    WARN("python -m kibench reproduce not checked: " << capi << " is not built (target kibench_capi)");
    return;
  }
  if (!kibench::make_backend()->gpu_unavailable_reason()) {
    WARN("python -m kibench reproduce of the seed not run: this machine has a GPU (it would run the seed)");
    return;
  }
  const auto python = run_command("PYTHONPATH=" + quoted(kSource / "python") +
                                  " /usr/bin/python3 -m kibench --capi " + quoted(capi) + " reproduce " +
                                  quoted(kSeedRecord) + " --out " + quoted(tmp.path() / "python-out"));
  const std::string refused = one_line_error(python);
  CHECK_THAT(refused,
             Contains("torch-eager on distill-jsd-loss-hidden4096-tokens8192-vocab128256-bf16 (full pass): "
                      "cannot run here"));
  CHECK_FALSE(fs::exists(tmp.path() / "python-out"));
}

TEST_CASE("reproduce: a kibench import liger record resolves to its provider's lane and workload",
          "[reproduce]") {
  TempDir tmp;
  const fs::path record =
      imported_record(tmp.path() / "imported",
                      "liger-distill-jsd-loss-full-liger-nvidia-h100-80gb-hbm3-hidden4096-tokens8192");
  const auto plain = run_kibench("reproduce " + quoted(record) + " --out " + quoted(tmp.path() / "out"));
  CHECK_THAT(one_line_error(plain),
             Contains("liger (Liger-Kernel's liger provider of distill_jsd_loss) is a Python lane"));

  const auto originals = kibench::reproduce::read_originals({record});
  REQUIRE(originals.size() == 1);
  CHECK(originals.front().digest == kibench::manifest_digest(read_json(record / "run.json")));
  const auto resolved = kibench::reproduce::resolve(originals.front(), known_with_python_lanes());
  CHECK(resolved.implementation == "liger");
  CHECK(resolved.pass == kibench::Pass::full);
  CHECK(resolved.workload_file.filename() == "seed-distill-jsd-h4096-t8192-v128256.json");
  CHECK_THAT(resolved.workload_from, Contains("matches the record's"));

  // A jsd record of the torch provider: torch-eager-jsd timed as Liger's script times it, on the shipped
  // Liger workload.
  const fs::path jsd = imported_record(tmp.path() / "imported-jsd",
                                       "liger-jsd-full-torch-nvidia-h100-pcie-tokens8192-vocab4096");
  const auto jsd_resolved = kibench::reproduce::resolve(kibench::reproduce::read_originals({jsd}).front(),
                                                        known_with_python_lanes());
  CHECK(jsd_resolved.implementation == "torch-eager-jsd-script");
  CHECK(jsd_resolved.workload.vocab == 4096);
  CHECK(jsd_resolved.workload.tokens == 8192);

  // A shape no shipped workload has (tokens 3000): derived, as --axis derives it.
  auto workload = read_json(record / "workload.json");
  member(member(member(workload, "spec"), "axes"), "tokens") = kibench::json::Value(3000);
  auto &tensors = member(member(workload, "spec"), "tensors");
  for (const char *name : {"student_input", "teacher_input"})
    member(member(tensors, name), "shape").as_array().front() = kibench::json::Value(3000);
  member(member(tensors, "target"), "shape").as_array().front() = kibench::json::Value(3000);
  auto run = read_json(record / "run.json");
  member(member(run, "spec"), "workloadDigest") = kibench::json::Value(kibench::manifest_digest(workload));
  write_json(record / "workload.json", workload);
  write_json(record / "run.json", run);
  const auto derived = kibench::reproduce::resolve(kibench::reproduce::read_originals({record}).front(),
                                                   known_with_python_lanes());
  CHECK(derived.axes.size() == 3);
  CHECK(derived.workload.tokens == 3000);
  CHECK_THAT(derived.workload_from, Contains("derived"));

  // Judged against a CPU run: another environment; the attestation validates.
  CpuRun cpu;
  const auto v = kibench::reproduce::make_verdict(originals.front(), resolved, cpu.here, 0.05, {});
  CHECK(v.type == kibench::reproduce::AttestationType::environment_note);
  CHECK(v.original.digest == originals.front().digest);
  write_outputs(tmp.path() / "liger", v);
  const auto valid = validate({tmp.path() / "liger"});
  INFO(valid.out);
  CHECK(valid.exit_code == 0);
}

TEST_CASE("reproduce: bad input is refused before any work, naming the field", "[reproduce]") {
  TempDir tmp;
  const fs::path original = kibench::test::quick_run(tmp.path() / "runs");
  const fs::path out = tmp.path() / "out";
  const auto refused = [&](const fs::path &record) {
    const std::string line =
        one_line_error(run_kibench("reproduce " + quoted(record) + " --out " + quoted(out)));
    CHECK_FALSE(fs::exists(out));
    return line;
  };
  // A record kibench can edit: a copy of the run directory.
  const auto copy = [&](const std::string &name) {
    const fs::path dir = tmp.path() / name;
    fs::copy(original, dir);
    return dir;
  };

  SECTION("an unknown implementation, by name") {
    const fs::path dir = copy("unknown-name");
    auto run = read_json(dir / "run.cpu-reference.json");
    member(member(member(run, "metadata"), "labels"), "implementation") =
        kibench::json::Value("no-such-kernel");
    write_json(dir / "run.cpu-reference.json", run);
    const std::string line = refused(dir);
    CHECK_THAT(line, Contains("metadata.labels.implementation: unknown implementation \"no-such-kernel\""));
  }
  SECTION("an unknown implementation, by digest") {
    auto seed = read_json(kSeedRecord);
    member(member(member(seed, "run"), "spec"), "implementationDigest") =
        kibench::json::Value("sha256:" + std::string(64, '0'));
    write_json(tmp.path() / "seed.json", seed);
    CHECK_THAT(refused(tmp.path() / "seed.json"),
               Contains("spec.implementationDigest: sha256:" + std::string(64, '0') +
                        ": no implementation kibench knows"));
  }
  // A record in KernelIndex's shape (no generators), edited and rehashed.
  const auto reduced = [&](const std::string &name, auto edit) {
    const fs::path dir = copy(name);
    auto workload = read_json(dir / "workload.json");
    for_each_tensor(workload, [](kibench::json::Object &tensor) { tensor.erase("data"); });
    edit(workload);
    auto run = read_json(dir / "run.cpu-reference.json");
    member(member(run, "spec"), "workloadDigest") = kibench::json::Value(kibench::manifest_digest(workload));
    write_json(dir / "workload.json", workload);
    write_json(dir / "run.cpu-reference.json", run);
    return dir;
  };
  SECTION("an operation kibench does not compute") {
    const fs::path dir = reduced("other-operation", [](kibench::json::Value &w) {
      member(member(w, "spec"), "operationSpecDigest") =
          kibench::json::Value("sha256:" + std::string(64, '1'));
    });
    CHECK_THAT(refused(dir), Contains("workload.json: spec.operationSpecDigest: sha256:" +
                                      std::string(64, '1') + ": an operation kibench does not compute"));
  }
  SECTION("a dtype kibench cannot generate") {
    const fs::path dir = reduced("fp16", [](kibench::json::Value &w) {
      for_each_tensor(w, [](kibench::json::Object &tensor) {
        if (tensor.find("dtype")->as_string() == "bf16") tensor.set("dtype", "fp16");
      });
    });
    CHECK_THAT(refused(dir), Contains("spec.tensors.student_input.dtype: \"fp16\" vs \"bf16\""));
  }
  SECTION("a shape kibench cannot generate") {
    const fs::path dir = reduced("batch-axis", [](kibench::json::Value &w) {
      member(member(w, "spec"), "axes").as_object().set("batch", 4);
    });
    CHECK_THAT(refused(dir), Contains("spec.axes.batch: kibench cannot generate"));
  }
  SECTION("a file that holds no BenchmarkRun") {
    CHECK_THAT(refused(original / "workload.json"), Contains("no BenchmarkRun"));
  }
  SECTION("an --out that cannot be written, before any work") {
    std::ofstream(tmp.path() / "a-file") << "not a folder\n";
    const auto r = run_kibench("reproduce " + quoted(original) + " --out " +
                               quoted(tmp.path() / "a-file" / "sub") + " " + kSampling);
    CHECK_THAT(one_line_error(r), Contains("--out"));
    CHECK(fs::is_regular_file(tmp.path() / "a-file"));
    CHECK(kibench::test::directories_in(tmp.path()) == std::vector<fs::path>{tmp.path() / "runs"});
  }
  SECTION("an evidence URL that is not https") {
    const auto r = run_kibench("reproduce " + quoted(original) + " --out " + quoted(out) +
                               " --evidence-url http://example.com/log");
    CHECK_THAT(one_line_error(r), Contains("--evidence-url"));
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("reproduce: the attestation check rejects what KernelIndex rejects", "[reproduce]") {
  TempDir tmp;
  CpuRun cpu;
  const auto originals = kibench::reproduce::read_originals({cpu.run_dir});
  const auto resolved =
      kibench::reproduce::resolve(originals.front(), kibench::make_backend()->implementations());
  const auto v = kibench::reproduce::make_verdict(originals.front(), resolved, cpu.here, 0.05, {});
  write_outputs(tmp.path() / "good", v);
  REQUIRE(validate({tmp.path() / "good"}).exit_code == 0);
  const auto broken = [&](const std::string &name, auto edit) {
    const fs::path dir = tmp.path() / name;
    fs::create_directories(dir);
    fs::copy_file(tmp.path() / "good" / "verdict.json", dir / "verdict.json");
    auto body = read_json(tmp.path() / "good" / "attestation.json");
    edit(body);
    write_json(dir / "attestation.json", body);
    const auto r = validate({dir});
    INFO(r.out);
    return r.exit_code;
  };
  CHECK(broken("type", [](auto &b) { b.as_object().set("type", "confirmed"); }) == 1);
  CHECK(broken("long-body", [](auto &b) { b.as_object().set("body", std::string(2001, 'x')); }) == 1);
  CHECK(broken("http", [](auto &b) { b.as_object().set("evidenceUrl", "http://example.com"); }) == 1);
  CHECK(broken("zero-ns", [](auto &b) { b.as_object().set("observedNs", 0); }) == 1);
  CHECK(broken("extra", [](auto &b) { b.as_object().set("runDigest", "sha256:00"); }) == 1);
  // Within KernelIndex's limits, counted as JavaScript counts them.
  const std::string body = kibench::reproduce::fit_utf16(std::string(3000, 'x'), 2000);
  CHECK(body.size() == 1999 + std::string("…").size());
  CHECK(kibench::reproduce::fit_utf16("≠≠≠", 2) == "≠…");
  CHECK(kibench::reproduce::fit_utf16("😀😀", 3) == "😀…");
}

TEST_CASE("reproduce: the H100 verdicts in docs/runs follow the rule and their attestations validate",
          "[reproduce]") {
  const fs::path measured = kibench::test::evidence_set("h100-2026-12-06") / "reproduce";
  const std::vector<fs::path> directories = kibench::test::directories_in(measured);
  REQUIRE(directories.size() == 3);
  for (const fs::path &dir : directories) {
    INFO(dir);
    const auto verdict = read_json(dir / "verdict.json");
    CHECK(kibench::json::member_at(verdict, "equivalentEnvironment")->as_bool());
    check_rule(verdict);
  }
  // The seed's: posted to the seed run's digest, its median as observedNs.
  const auto seed = read_json(measured / "seed/verdict.json");
  CHECK(string_at(seed, "attestation.idOrDigest") ==
        kibench::manifest_digest(*read_json(kSeedRecord).find("run")));
  CHECK(string_at(seed, "resolved.implementation") == "torch-eager");
  const auto valid = validate(directories);
  INFO(valid.out);
  CHECK(valid.exit_code == 0);
}
