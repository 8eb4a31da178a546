// `kibench run --plugin`: the example plugin's CPU lane beside a built-in
// through the oracle gate, the timer and compare; lanes that fail each way
// recorded while the others are measured; plugins refused before any work.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "kernels/builtin_revision.hpp"
#include "kernels/plugin/elf_check.hpp"
#include "lib/digest/digest.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench::test;

namespace {

const fs::path kSource = kibench::test::source_dir();
const fs::path kSmall = kSource / "workloads/small/small-v1000-h64-t32.json";
const fs::path kPlugins = KIBENCH_TEST_PLUGIN_DIR;
const fs::path kExample = KIBENCH_EXAMPLE_PLUGIN;
const std::string kQuick = "--min-samples 10 --max-samples 30 --min-time 0 --warmup 1";

fs::path only_run_dir(const fs::path &out) {
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(out)) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 1);
  return dirs.front();
}

std::string validate_command(const fs::path &target) {
  return "/usr/bin/python3 " + quoted(kSource / "test/schema/validate.py") + " " +
         quoted(kSource / "test/data/kernelindex/schemas") + " " + quoted(target);
}

// `kibench run` with one plugin library; nothing may be written on refusal.
ProcessResult refused(const fs::path &plugin, const std::string &impl, const fs::path &out) {
  auto r = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(plugin) + " --impl " + impl +
                       " --out " + quoted(out) + " " + kQuick);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(out));
  return r;
}

} // namespace

TEST_CASE("the example plugin's CPU lane runs beside a built-in and compare ranks both", "[cli][plugin]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto run = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(kExample) +
                               " --impl cpu-reference,example-cpu-fp32 --out " + quoted(out) + " " + kQuick);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("example-cpu-fp32") != std::string::npos);
  const fs::path dir = only_run_dir(out);
  for (const char *name : {"run.example-cpu-fp32.json", "samples.example-cpu-fp32.json",
                           "implementation.example-cpu-fp32.json", "run.cpu-reference.json"})
    CHECK(fs::exists(dir / name));
  const std::string run_text = read_text(dir / "run.example-cpu-fp32.json");
  CHECK(run_text.find("\"status\": \"passed\"") != std::string::npos);
  CHECK(run_text.find("\"timing\"") != std::string::npos);

  SECTION("its revision names the library's bytes, the facts it declares and the plugin interface") {
    const std::string revision = read_text(dir / "implementation.example-cpu-fp32.json");
    const std::string library_digest = kibench::sha256_digest(read_text(kExample));
    CHECK(revision.find("\"contentDigest\": \"" + library_digest + "\"") != std::string::npos);
    CHECK(revision.find("\"fileName\": \"" + kExample.filename().string() + "\"") != std::string::npos);
    CHECK(revision.find("\"interface\": \"kibench_plugin\"") != std::string::npos);
    CHECK(revision.find("\"language\": \"c\"") != std::string::npos);
    CHECK(revision.find("\"version\": \"1.0.0\"") != std::string::npos);
    CHECK(revision.find("\"name\": \"kibench-example-cpu-fp32\"") != std::string::npos);
    // And the build it is: the library's GNU build-id, where the linker wrote one.
    const auto build_id = kibench::plugin::elf_build_id(kExample);
    if (build_id) {
      CHECK(build_id->size() >= 16);
      CHECK(revision.find("\"library_build_id\": \"" + *build_id + "\"") != std::string::npos);
    } else {
      CHECK(revision.find("library_build_id") == std::string::npos);
    }
    // A file that is no ELF has none.
    CHECK_FALSE(kibench::plugin::elf_build_id(kSmall));
  }
  SECTION("the directory validates, verifies, and compare ranks the plugin in the built-in's cohort") {
    const auto v = run_command(validate_command(dir));
    INFO(v.out);
    CHECK(v.exit_code == 0);
    CHECK(run_kibench("digest --verify " + quoted(dir)).exit_code == 0);
    const auto compare = run_kibench("compare " + quoted(dir) + " --baseline cpu-reference");
    INFO(compare.out << compare.err);
    REQUIRE(compare.exit_code == 0);
    CHECK(compare.out.find("2 runs in 1 cohort") != std::string::npos);
    CHECK(compare.out.find("paired") != std::string::npos);
    CHECK(compare.out.find("not ranked") == std::string::npos);
  }
}

TEST_CASE("a plugin built against ABI version 1 still runs distill_jsd_loss, and only that",
          "[cli][plugin]") {
  const fs::path v1 = kPlugins / "libkibench_test_plugin_abi_v1.so";
  TempDir tmp;
  const auto run = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(v1) +
                               " --impl cpu-reference,example-cpu-fp32 --out " + quoted(tmp.path() / "runs") +
                               " " + kQuick);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const fs::path dir = only_run_dir(tmp.path() / "runs");
  CHECK(read_text(dir / "run.example-cpu-fp32.json").find("\"status\": \"passed\"") != std::string::npos);
  CHECK(read_text(dir / "implementation.example-cpu-fp32.json")
            .find(std::string(kibench::kDistillJsdLossOperationDigest)) != std::string::npos);

  const auto jsd = run_kibench("run " + quoted(kSource / "workloads/jsd/small/jsd-small-t32-v1000.json") +
                               " --plugin " + quoted(v1) + " --impl cpu-reference,example-cpu-fp32 --out " +
                               quoted(tmp.path() / "jsd") + " " + kQuick);
  INFO(jsd.err);
  REQUIRE(jsd.exit_code == 0);
  CHECK(jsd.err.find("example-cpu-fp32 skipped: example-cpu-fp32 does not compute jsd") != std::string::npos);
  CHECK_FALSE(fs::exists(only_run_dir(tmp.path() / "jsd") / "run.example-cpu-fp32.json"));
}

TEST_CASE("kibench list --plugin lists the plugin's implementations", "[cli][plugin]") {
  const auto list = run_kibench("list --plugin " + quoted(kExample));
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("example-cpu-fp32") != std::string::npos);
  CHECK(list.out.find("example-cuda-simt") != std::string::npos);
  CHECK(list.out.find("[plugin: ") != std::string::npos);
}

TEST_CASE("a plugin lane that cannot time the pass is skipped with its reason", "[cli][plugin]") {
  TempDir tmp;
  const auto run = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(kExample) +
                               " --impl cpu-reference,example-cpu-fp32 --pass backward --out " +
                               quoted(tmp.path()) + " " + kQuick);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("example-cpu-fp32 skipped: computes the loss and its gradients in one sweep") !=
        std::string::npos);
  const fs::path dir = only_run_dir(tmp.path());
  CHECK_FALSE(fs::exists(dir / "run.example-cpu-fp32.json"));
  CHECK(read_text(dir / "summary.json").find("one sweep") != std::string::npos);
}

TEST_CASE("lanes that fail are recorded with their status and reason, the others are measured",
          "[cli][plugin]") {
  TempDir tmp;
  const auto run =
      run_kibench("run " + quoted(kSmall) + " --plugin " +
                  quoted(kPlugins / "libkibench_test_plugin_lanes.so") + " --plugin " + quoted(kExample) +
                  " --impl cpu-reference,raises-in-prepare,raises-in-run,raises-in-sample,wrong-shape,"
                  "wrong-dtype,nan-outputs,aliases-input,host-on-gpu-lane,exits-in-sample,segfaults-in-sample,"
                  "example-cpu-fp32 --out " +
                  quoted(tmp.path()) + " " + kQuick);
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  const fs::path dir = only_run_dir(tmp.path());
  // The run ends with every failure in one place, the failing output named.
  CHECK(run.out.find("implementation runs failed (exit 1):") != std::string::npos);
  CHECK(run.out.find("· raises-in-run · runtime_error: raises-in-run: run: deliberate failure in run") !=
        std::string::npos);
  CHECK(run.out.find("· nan-outputs · incorrect_numerical: FAIL:") != std::string::npos);
  CHECK(run.out.find("· cpu-reference ·") == std::string::npos);

  struct Expected {
    const char *lane;
    const char *status;
    const char *reason;
  };
  const Expected failures[] = {
      {"raises-in-prepare", "runtime_error",
       "raises-in-prepare: prepare: deliberate failure in prepare second line"},
      {"raises-in-run", "runtime_error", "raises-in-run: run: deliberate failure in run"},
      {"raises-in-sample", "timeout", "raises-in-sample: run: deliberate failure in the fourth run"},
      {"wrong-shape", "incorrect_shape",
       "grad_student_weight has shape [1000, 31], the workload's is [1000, 32]"},
      {"wrong-dtype", "incorrect_dtype", "grad_student_weight is int64; kibench compares bf16, fp32 or fp64"},
      {"aliases-input", "runtime_error", "grad_student_input overlaps kibench's input student_input"},
      {"host-on-gpu-lane", "runtime_error", "grad_student_input is in device memory"},
      // Each runs in a worker process of its own (--isolation auto): its
      // end is its lane's failure, not the run's.
      {"exits-in-sample", "runtime_error", "its worker process exited with code 0 during"},
      {"segfaults-in-sample", "runtime_error",
       "its worker process was killed by signal 11 (SIGSEGV, a segmentation fault) during"},
  };
  for (const auto &f : failures) {
    INFO(f.lane);
    const std::string text = read_text(dir / (std::string("run.") + f.lane + ".json"));
    CHECK(text.find(std::string("\"status\": \"") + f.status + "\"") != std::string::npos);
    CHECK(text.find(f.reason) != std::string::npos);
    CHECK(text.find("\"timing\"") == std::string::npos);
    CHECK_FALSE(fs::exists(dir / (std::string("samples.") + f.lane + ".json")));
    CHECK(run.err.find(std::string(f.lane) + " failed (" + f.status + ")") != std::string::npos);
    // The table's line: the name, padded, then the status and reason.
    const std::size_t line = run.out.find("\n" + std::string(f.lane) + " ");
    REQUIRE(line != std::string::npos);
    const std::string row = run.out.substr(line + 1, run.out.find('\n', line + 1) - line - 1);
    // The plugin's own messages start with the lane's name; a worker's end
    // is told from the outside.
    const std::string reason = f.reason;
    const std::string starts = reason.rfind("its worker process", 0) == 0 ? reason.substr(0, 24) : f.lane;
    CHECK(row.find(std::string("FAILED (") + f.status + "): " + starts) != std::string::npos);
  }
  // Every plugin lane ran in a worker process, and says so.
  CHECK(read_text(dir / "run.example-cpu-fp32.json").find("\"isolation\": \"worker_process\"") !=
        std::string::npos);
  // NaN outputs are a failed check, measured like any other.
  const std::string nan = read_text(dir / "run.nan-outputs.json");
  CHECK(nan.find("\"status\": \"incorrect_numerical\"") != std::string::npos);
  CHECK(nan.find("\"timing\"") != std::string::npos);
  // It has no memory(): its memory is unknown, shown so and never recorded as 0.
  CHECK(nan.find("workspace_memory") == std::string::npos);
  CHECK(nan.find("peak_memory") == std::string::npos);
  {
    const std::size_t row = run.out.find("\nnan-outputs ");
    REQUIRE(row != std::string::npos);
    const std::string line = run.out.substr(row, run.out.find('\n', row + 1) - row);
    CHECK(line.find("unknown    unknown") != std::string::npos);
    // The NaN elements are named, not a relative error of the finite ones.
    CHECK(line.find("FAILED (32000 NaN/Inf in grad_student_weight)") != std::string::npos);
  }
  // The example's CPU lane measures its own.
  CHECK(read_text(dir / "run.example-cpu-fp32.json").find("workspace_memory") != std::string::npos);
  // The others are intact.
  for (const char *lane : {"cpu-reference", "example-cpu-fp32"}) {
    const std::string text = read_text(dir / (std::string("run.") + lane + ".json"));
    CHECK(text.find("\"status\": \"passed\"") != std::string::npos);
    CHECK(fs::exists(dir / (std::string("samples.") + lane + ".json")));
  }
  const std::string summary = read_text(dir / "summary.json");
  CHECK(summary.find("\"failure\": \"raises-in-run: run: deliberate failure in run\"") != std::string::npos);

  SECTION("the directory validates, verifies, and compare ranks the passed lanes only") {
    const auto v = run_command(validate_command(dir));
    INFO(v.out);
    CHECK(v.exit_code == 0);
    CHECK(run_kibench("digest --verify " + quoted(dir)).exit_code == 0);
    const auto compare = run_kibench("compare " + quoted(dir) + " --baseline cpu-reference");
    REQUIRE(compare.exit_code == 0);
    CHECK(compare.out.find("raises-in-run  STATUS_NOT_PASSED") != std::string::npos);
    CHECK(compare.out.find("example-cpu-fp32") != std::string::npos);
  }
}

TEST_CASE("plugins are refused before any work, naming the file and what is wrong", "[cli][plugin]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  SECTION("another ABI version") {
    const auto r = refused(kPlugins / "libkibench_test_plugin_other_abi.so", "other-abi", out);
    CHECK(
        r.err.find("libkibench_test_plugin_other_abi.so: kibench_plugin_entry: plugin ABI version 999, this "
                   "kibench speaks 1 to 2") != std::string::npos);
  }
  SECTION("no entry symbol") {
    const auto r = refused(kPlugins / "libkibench_test_plugin_no_entry.so", "x", out);
    CHECK(r.err.find("libkibench_test_plugin_no_entry.so: --plugin: no symbol kibench_plugin_entry") !=
          std::string::npos);
  }
  SECTION("a file that does not load") {
    const fs::path garbage = tmp.path() / "libgarbage.so";
    std::ofstream(garbage) << "not a shared library\n";
    const auto r = refused(garbage, "x", out);
    CHECK(r.err.find("libgarbage.so: --plugin: not a loadable shared library: truncated") !=
          std::string::npos);
  }
  SECTION("a file that does not exist") {
    const auto r = refused(tmp.path() / "libmissing.so", "x", out);
    CHECK(r.err.find("libmissing.so: --plugin: no such file") != std::string::npos);
  }
  SECTION("revision facts the manifest builder refuses") {
    const auto r = refused(kPlugins / "libkibench_test_plugin_bad_facts.so", "bad-facts", out);
    CHECK(
        r.err.find("libkibench_test_plugin_bad_facts.so: revision facts: implementation \"test-bad-facts\": "
                   "spec.callable.language must match") != std::string::npos);
  }
  SECTION("a built-in's name") {
    const auto r = refused(kPlugins / "libkibench_test_plugin_taken_name.so", "cpu-reference", out);
    CHECK(r.err.find("implementation \"cpu-reference\": a built-in implementation has this name") !=
          std::string::npos);
  }
  SECTION("a missing function") {
    const auto r = refused(kPlugins / "libkibench_test_plugin_no_run.so", "no-run", out);
    CHECK(r.err.find("implementation \"no-run\": run is NULL") != std::string::npos);
  }
  SECTION("one name from two plugins") {
    auto r = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(kExample) + " --plugin " +
                         quoted(kExample) + " --impl example-cpu-fp32 --out " + quoted(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("implementation \"example-cpu-fp32\": " + kExample.string() +
                     " provides one of this name already") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("an unknown name still lists the plugin's") {
    auto r = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(kExample) + " --impl nope --out " +
                         quoted(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("example-cpu-fp32") != std::string::npos);
  }
}

TEST_CASE("a truncated plugin library is refused in one line, not a SIGBUS inside dlopen", "[cli][plugin]") {
  TempDir tmp;
  std::ifstream in(kExample, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 4096);
  for (const std::size_t keep : {bytes.size() / 2, std::size_t{100}, std::size_t{10}}) {
    INFO(keep << " bytes kept");
    const fs::path cut = tmp.path() / "libtruncated.so";
    std::ofstream(cut, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(keep));
    const auto r = refused(cut, "example-cpu-fp32", tmp.path() / "out");
    CHECK(r.err.find("--plugin: not a loadable shared library: truncated") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const fs::path text = tmp.path() / "libtext.so";
  std::ofstream(text) << "not a library at all, but long enough to hold an ELF header's sixty-four bytes.\n";
  const auto r = refused(text, "example-cpu-fp32", tmp.path() / "out");
  CHECK(r.err.find("not a loadable shared library: not an ELF file") != std::string::npos);
}

TEST_CASE("isolation: plugin lanes in worker processes by default on the CPU, in kibench's on request",
          "[cli][plugin]") {
  TempDir tmp;
  SECTION("in-process: the lane runs in kibench's process and its run does not say worker_process") {
    const auto run = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(kExample) +
                                 " --impl example-cpu-fp32 --isolation in-process --out " + quoted(tmp.path()) +
                                 " " + kQuick);
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    const std::string text = read_text(only_run_dir(tmp.path()) / "run.example-cpu-fp32.json");
    CHECK(text.find("\"status\": \"passed\"") != std::string::npos);
    CHECK(text.find("worker_process") == std::string::npos);
  }
  SECTION("an unknown value is refused before any work") {
    const auto run = run_kibench("run " + quoted(kSmall) + " --plugin " + quoted(kExample) +
                                 " --impl example-cpu-fp32 --isolation sandbox --out " +
                                 quoted(tmp.path() / "out") + " " + kQuick);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("--isolation: \"sandbox\" is not auto, process or in-process") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp.path() / "out"));
  }
  SECTION("kibench worker started by hand says what it is for") {
    const auto run = run_kibench("worker --lane example-cpu-fp32 --plugin " + quoted(kExample));
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("descriptor 3 is not a socket: kibench starts its workers itself") != std::string::npos);
  }
}
