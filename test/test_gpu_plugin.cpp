// [gpu] The example plugin's CUDA lane through `kibench run` beside fused:
// on kibench's stream and inputs, through the oracle gate, timed with
// kibench's CUDA events, on workloads with and without a bias, an ignored
// share of tokens, and the forward pass.
#include <catch2/catch.hpp>

#include <filesystem>

#include "test/carried_paths.hpp"
#include "test/cli_process.hpp"
#include "test/test_gpu_support.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench::test;

TEST_CASE("the example plugin's CUDA lane passes the oracle gate beside fused", "[gpu][plugin]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const char *workloads[] = {"small/small-v1000-h64-t32.json", "small/small-v1000-h64-t32-bias.json",
                             "small/small-v1000-h64-t32-ignore25.json",
                             "small/small-v1003-h64-t32-odd-vocab.json",
                             "distill-jsd-h1024-t1000-v50257.json"};
  for (const char *pass : {"full", "forward"}) {
    for (const char *w : workloads) {
      INFO(w << " " << pass);
      TempDir tmp;
      const auto run = run_command(
          quoted(beside_tests(KIBENCH_BINARY)) + " run " + quoted(workload_file(w)) + " --plugin " +
          quoted(beside_tests(KIBENCH_EXAMPLE_PLUGIN)) + " --impl fused,example-cuda-simt --pass " + pass +
          " --out " + quoted(tmp.path()) + " --min-samples 5 --max-samples 10 --min-time 0 --sustained 0");
      INFO(run.out << run.err);
      CHECK(run.exit_code == 0);
      CHECK(run.out.find("example-cuda-simt") != std::string::npos);
      CHECK(run.err.find("failed (") == std::string::npos);
    }
  }
}
