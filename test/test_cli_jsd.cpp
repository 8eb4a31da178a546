// jsd and fused_linear_jsd end to end on the CPU path: `kibench run` on
// every small workload of both (the oracle gate passes: exit 0), run
// directories that validate and verify, revisions that name the
// operation; and `kibench compare` standing a run beside the imported Liger
// record of the same operation (a compatible_workload view) and not beside
// another operation's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/builtin_revision.hpp"
#include "lib/json/parse.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench::test;
using Catch::Matchers::Contains;

namespace {

const fs::path kSource = kibench::test::source_dir();
const std::string kQuick = "--min-samples 5 --max-samples 10 --min-time 0 --warmup 1";

std::vector<fs::path> subdirectories(const fs::path &dir) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string spec_string(const fs::path &file, std::initializer_list<std::string_view> keys) {
  const kibench::json::Value value = kibench::json::parse_file(file);
  const kibench::json::Value *at = &value;
  for (const auto key : keys) {
    at = at->find(key);
    REQUIRE(at != nullptr);
  }
  return at->as_string();
}

// The imported Liger record of `kernel`/full/`provider` whose run directory name holds `case_key`.
fs::path imported_record(const fs::path &imported, const std::string &kernel, const std::string &case_key) {
  for (const fs::path &dir : subdirectories(imported)) {
    const std::string name = dir.filename().string();
    if (name.starts_with("liger-" + kernel + "-full-liger-") && name.find(case_key) != std::string::npos) return dir;
  }
  FAIL("no imported record " << kernel << " " << case_key);
  return {};
}

} // namespace

TEST_CASE("kibench run: every small jsd and fused_linear_jsd workload passes the oracle gate on the CPU",
          "[cli][run][jsd]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto run = run_kibench("run " + quoted(kSource / "workloads/jsd/small") + "/*.json " +
                               quoted(kSource / "workloads/fused_linear_jsd/small") +
                               "/*.json --impl cpu-reference,cpu-fp64 --out " + quoted(out) + " " + kQuick);
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const std::vector<fs::path> dirs = subdirectories(out);
  CHECK(dirs.size() == 7 + 9);
  std::size_t jsd_runs = 0;
  for (const fs::path &dir : dirs) {
    INFO(dir.filename().string());
    const std::string operation = kibench::json::parse_file(dir / "operation.json").find("metadata")->find("name")->as_string();
    const bool is_jsd = operation == "liger-jsd";
    CHECK((is_jsd || operation == "liger-fused-linear-jsd"));
    jsd_runs += is_jsd ? 1 : 0;
    const std::string digest =
        std::string(is_jsd ? kibench::kJsdOperationDigest : kibench::kFusedLinearJsdOperationDigest);
    CHECK(spec_string(dir / "workload.json", {"spec", "operationSpecDigest"}) == digest);
    for (const char *name : {"cpu-reference", "cpu-fp64"}) {
      const fs::path revision = dir / ("implementation." + std::string(name) + ".json");
      REQUIRE(fs::exists(revision));
      CHECK(spec_string(revision, {"spec", "operation", "specDigest"}) == digest);
      CHECK(spec_string(dir / ("run." + std::string(name) + ".json"), {"spec", "status"}) == "passed");
    }
    const auto verify = run_kibench("digest --verify " + quoted(dir));
    INFO(verify.out << verify.err);
    CHECK(verify.exit_code == 0);
  }
  CHECK(jsd_runs == 7);
  // The run directories are KernelIndex manifests.
  const auto validate = run_command("/usr/bin/python3 " + quoted(kSource / "test/schema/validate.py") + " " +
                                    quoted(kSource / "test/data/kernelindex/schemas") + " " + quoted(dirs.front()));
  INFO(validate.out << validate.err);
  CHECK(validate.exit_code == 0);
}

TEST_CASE("kibench run: jsd has no backward-only pass, and says so", "[cli][run][jsd]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto run = run_kibench("run " + quoted(kSource / "workloads/jsd/small/jsd-small-t32-v1000.json") +
                               " --impl cpu-reference --out " + quoted(out) + " --pass backward " + kQuick);
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out + run.err, Contains("cpu-reference") && Contains("jsd computes its gradient with its loss"));
}

TEST_CASE("kibench compare stands a jsd or fused_linear_jsd run beside Liger's imported records",
          "[cli][compare][jsd]") {
  TempDir tmp;
  const fs::path imported = tmp.path() / "imported";
  const auto import = run_kibench("import liger " + quoted(kSource / "test/data/liger/jsd-family-rows.csv") +
                                  " --out " + quoted(imported));
  INFO(import.out << import.err);
  REQUIRE(import.exit_code == 0);

  const fs::path runs = tmp.path() / "runs";
  const auto run = run_kibench("run " + quoted(kSource / "workloads/jsd/small/jsd-small-t32-v1000.json") + " " +
                               quoted(kSource / "workloads/fused_linear_jsd/small/fused-linear-jsd-small-t32-h64-v1000.json") +
                               " --impl cpu-reference --out " + quoted(runs) + " " + kQuick);
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  fs::path jsd_run, fused_run;
  for (const fs::path &dir : subdirectories(runs))
    (dir.filename().string().find("-fused-linear-jsd-") == std::string::npos ? jsd_run : fused_run) = dir;
  REQUIRE_FALSE(jsd_run.empty());
  REQUIRE_FALSE(fused_run.empty());

  const fs::path liger_jsd = imported_record(imported, "jsd", "tokens8192-vocab131072-fp32");
  const fs::path liger_fused = imported_record(imported, "fused-linear-jsd", "hidden4096-tokens8192-vocab128256-bf16");
  // The same operation (one digest on both sides): a labelled view with a ratio.
  CHECK(spec_string(jsd_run / "workload.json", {"spec", "operationSpecDigest"}) ==
        spec_string(liger_jsd / "workload.json", {"spec", "operationSpecDigest"}));
  for (const auto &[ours, theirs] : {std::pair{jsd_run, liger_jsd}, std::pair{fused_run, liger_fused}}) {
    const auto compare = run_kibench("compare --verbose " + quoted(ours) + " " + quoted(theirs));
    INFO(compare.out << compare.err);
    CHECK(compare.exit_code == 0);
    CHECK_THAT(compare.out, Contains("WORKLOAD_MISMATCH"));
    CHECK_THAT(compare.out, Contains("compatible_workload view"));
  }
  // Another operation: reasons only.
  const auto other = run_kibench("compare --verbose " + quoted(jsd_run) + " " + quoted(liger_fused));
  INFO(other.out << other.err);
  CHECK(other.exit_code == 0);
  CHECK_THAT(other.out, Contains("OPERATION_MISMATCH"));
  CHECK_THAT(other.out, Contains("no view: different operations"));
}

TEST_CASE("kibench run on jsd: the header states its bytes, --save-tensors its [T, V] tensors", "[cli][run][jsd]") {
  TempDir tmp;
  const auto run = run_kibench("run " + quoted(kSource / "workloads/jsd/small/jsd-small-t32-v1003-odd-vocab.json") +
                               " --impl cpu-reference --out " + quoted(tmp.path() / "runs") + " --save-tensors " +
                               quoted(tmp.path() / "tensors") + " " + kQuick);
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  // 2 · 4 · 32 · 1003 bytes read, 4 · 32 · 1003 written.
  CHECK_THAT(run.out, Contains("(jsd: T=32 V=1003, β=0.5; 0.000257 GB read, 0.000128 GB written per full pass)"));
  // No GEMM: the table gives bandwidth (those bytes over the median), not
  // TFLOP/s, and so do the run and the summary.
  CHECK_THAT(run.out, Contains("÷ floor     GB/s"));
  CHECK_THAT(run.out, !Contains("TFLOP/s"));
  const std::vector<fs::path> runs = subdirectories(tmp.path() / "runs");
  REQUIRE(runs.size() == 1);
  CHECK_THAT(read_text(runs.front() / "run.cpu-reference.json"), Contains("\"metric\": \"bandwidth\""));
  CHECK_THAT(read_text(runs.front() / "summary.json"), Contains("\"effectiveGBps\": "));
  const std::vector<fs::path> dirs = subdirectories(tmp.path() / "tensors");
  REQUIRE(dirs.size() == 1);
  const fs::path dir = dirs.front();
  for (const char *file : {"input.student_log_probs.fp32.npy", "input.teacher_log_probs.fp32.npy",
                           "input.target.int64.npy", "cpu-fp64.grad_student_input.fp64.npy",
                           "cpu-reference.grad_student_input.fp32.npy"}) {
    INFO(file);
    REQUIRE(fs::exists(dir / file));
    if (std::string(file) != "input.target.int64.npy")
      CHECK(read_text(dir / file).find("'shape': (32, 1003)") != std::string::npos);
  }
  // No LM-head tensors: jsd has none.
  CHECK_FALSE(fs::exists(dir / "input.student_input.bf16.npy"));
}

TEST_CASE("every case of Liger's jsd and fused_linear_jsd records has a kibench workload of its axes and dtypes",
          "[cli][import][jsd]") {
  TempDir tmp;
  const fs::path imported = tmp.path() / "imported";
  const auto import = run_kibench("import liger " + quoted(kSource / "test/data/liger/jsd-family-rows.csv") +
                                  " --out " + quoted(imported));
  INFO(import.out << import.err);
  REQUIRE(import.exit_code == 0);
  // A case: the operation digest, the axes and each input tensor's dtype and shape.
  const auto case_of = [](const kibench::json::Value &workload) {
    const kibench::json::Value &spec = *workload.find("spec");
    kibench::json::Object tensors;
    for (const auto &[name, tensor] : spec.find("tensors")->as_object()) {
      if (name == "target") continue; // kibench's optional labels; Liger's benchmarks pass none
      tensors.set(name, kibench::json::Object{{"dtype", *tensor.find("dtype")}, {"shape", *tensor.find("shape")}});
    }
    return kibench::json::Value(kibench::json::Object{{"operation", *spec.find("operationSpecDigest")},
                                                      {"axes", *spec.find("axes")},
                                                      {"tensors", kibench::json::Value(std::move(tensors))}});
  };
  std::vector<kibench::json::Value> ours;
  for (const char *folder : {"workloads/jsd/liger", "workloads/fused_linear_jsd/liger"})
    for (const auto &e : fs::directory_iterator(kSource / folder))
      ours.push_back(case_of(kibench::json::parse_file(e.path())));
  std::size_t checked = 0;
  for (const fs::path &dir : subdirectories(imported)) {
    const std::string name = dir.filename().string();
    if (!name.starts_with("liger-jsd-") && !name.starts_with("liger-fused-linear-jsd-")) continue;
    INFO(name);
    const kibench::json::Value theirs = case_of(kibench::json::parse_file(dir / "workload.json"));
    CHECK(std::find(ours.begin(), ours.end(), theirs) != ours.end());
    ++checked;
  }
  CHECK(checked == 64); // the 80 imported records less distill_jsd_loss's 16
}
