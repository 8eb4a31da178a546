// [gpu] The harness trusts no CUDA plugin (docs/protocol.md, "What the
// harness checks"): each lane of test/plugins/untrusted_gpu_plugin.c
// computes the right answer on the GPU and then breaks one rule. In one
// `kibench run`, each is failed with its named reason, while fused and the
// example plugin's honest CUDA lane, in the same rounds, pass and are
// measured. Each plugin lane runs in a worker process of its own (the
// default, --isolation auto).
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>

#include "test/carried_paths.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"
#include "test/test_gpu_support.hpp"

namespace fs = std::filesystem;
using namespace kibench::test;

namespace {

fs::path the_run(const fs::path &out) {
  fs::path found;
  for (const auto &entry : fs::directory_iterator(out)) found = entry.path();
  return found;
}

std::string status_of(const std::string &manifest) {
  std::smatch m;
  static const std::regex status("\"status\": \"([a-z_]+)\"");
  return std::regex_search(manifest, m, status) ? m[1].str() : "";
}

} // namespace

TEST_CASE("CUDA plugin lanes that break the harness's rules fail alone, in worker processes",
          "[gpu][plugin][untrusted]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  TempDir tmp;
  const fs::path untrusted = beside_tests(fs::path(KIBENCH_TEST_PLUGIN_DIR) / "libkibench_test_plugin_untrusted_gpu.so");
  const auto run = run_command(
      quoted(beside_tests(KIBENCH_BINARY)) + " run " + quoted(workload_file("small/small-v1000-h64-t32.json")) + " --plugin " + quoted(untrusted) +
      " --plugin " + quoted(beside_tests(KIBENCH_EXAMPLE_PLUGIN)) +
      " --impl fused,gpu-cached-in-prepare,gpu-cached-after-first-call,gpu-right-three-times,"
      "gpu-writes-teacher-weight,gpu-raises-in-sample,gpu-exits-in-sample,gpu-segfaults-in-sample,"
      "gpu-aliases-input,example-cuda-simt --out " +
      quoted(tmp.path()) + " --min-samples 12 --max-samples 20 --min-time 0 --warmup 2 --sustained 0");
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  const fs::path dir = the_run(tmp.path());
  REQUIRE_FALSE(dir.empty());

  struct Expected {
    const char *lane;
    const char *status;
    const char *reason; // a regular expression, in its run's manifest; nullptr: a failed check,
                        // named in the run's closing summary
  };
  const Expected failures[] = {
      // Its exposed outputs are poisoned before the check, and it writes none.
      {"gpu-cached-in-prepare", "incorrect_numerical", nullptr},
      // Timed on the second input set, it returns the first set's answer.
      {"gpu-cached-after-first-call", "incorrect_numerical", "the outputs of timed sample [0-9]+ fail the check"},
      {"gpu-right-three-times", "incorrect_numerical",
       "the outputs of timed sample [0-9]+ fail the check.*grad_student_weight"},
      {"gpu-writes-teacher-weight", "runtime_error",
       "wrote into its copy of the shared input teacher_weight \\(device copy\\) during a call to run, in its "
       "worker process"},
      {"gpu-raises-in-sample", "runtime_error", "deliberate failure in the fourth run"},
      {"gpu-exits-in-sample", "runtime_error", "its worker process exited with code 0 during"},
      {"gpu-segfaults-in-sample", "runtime_error",
       "its worker process was killed by signal 11 \\(SIGSEGV, a segmentation fault\\) during"},
      {"gpu-aliases-input", "runtime_error", "grad_student_input overlaps kibench's input student_input"},
  };
  for (const auto &f : failures) {
    INFO(f.lane);
    const std::string manifest = read_text(dir / (std::string("run.") + f.lane + ".json"));
    CHECK(status_of(manifest) == f.status);
    if (f.reason != nullptr)
      CHECK(std::regex_search(manifest, std::regex(f.reason)));
    else
      CHECK(run.out.find(std::string("· ") + f.lane + " · incorrect_numerical: FAIL:") != std::string::npos);
    if (std::string(f.status) == "runtime_error") CHECK(manifest.find("\"timing\"") == std::string::npos);
  }
  // The honest lanes in the same rounds: passed, their timed outputs
  // checked; the plugin's ran in a worker of its own.
  for (const char *honest : {"fused", "example-cuda-simt"}) {
    INFO(honest);
    const std::string manifest = read_text(dir / (std::string("run.") + honest + ".json"));
    CHECK(status_of(manifest) == "passed");
    CHECK(manifest.find("\"timing\"") != std::string::npos);
    CHECK(manifest.find("\"timed_checks\"") != std::string::npos);
  }
  const std::string example = read_text(dir / "run.example-cuda-simt.json");
  CHECK(example.find("\"isolation\": \"worker_process\"") != std::string::npos);
  CHECK(example.find("\"input_sets\"") != std::string::npos);
}
