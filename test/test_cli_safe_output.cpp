// What kibench writes it writes safely, and what it refuses it refuses in
// one line: --out never replaces a device, FIFO or symlink; output that
// never reached stdout is an error; numeric flags are range-checked (nan
// and inf too); long strings in run files are refused, not a crash;
// `digest --verify` of a folder of runs verifies them, and verifying
// nothing is an error; export writes what the raw samples say.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace kibench::test;

namespace {

const std::string kRunFile = "run.cpu-reference.json";

// Replaces the member at `path` ("spec.timing.latencyNs.median") of the
// JSON file `file` with `value`, keeping the rest as it was.
void edit_json(const fs::path &file, const std::vector<std::string> &path, kibench::json::Value value) {
  kibench::json::Value document = kibench::json::parse_file(file);
  kibench::json::Value *at = &document;
  for (std::size_t k = 0; k + 1 < path.size(); ++k) {
    at = at->as_object().find(path[k]);
    REQUIRE(at != nullptr);
  }
  at->as_object().set(path.back(), std::move(value));
  std::ofstream(file, std::ios::binary | std::ios::trunc) << kibench::json::pretty(document) << "\n";
}

std::size_t lines_in(const std::string &text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A command's stdout sent to `target` (its stderr captured as usual).
ProcessResult with_stdout_to(const std::string &arguments, const std::string &target) {
  return run_command("{ '" + std::string(KIBENCH_BINARY) + "' " + arguments + " >" + target + "; }");
}

} // namespace

TEST_CASE("a run file's long latency string is refused in one line by compare, report and export",
          "[cli][safe-output][long-strings]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  // 40 000 digits overflowed std::regex's stack (SIGSEGV); std::stod of a
  // shorter one threw out_of_range (exit 3).
  for (const std::size_t digits : {std::size_t{40000}, std::size_t{400}}) {
    edit_json(run / kRunFile, {"spec", "timing", "latencyNs", "median"}, std::string(digits, '7') + " ns");
    for (const std::string &command :
         std::vector<std::string>{"compare " + quoted(run), "export " + quoted(run),
                                  "report " + quoted(run) + " --out " + quoted(tmp.path() / "r.html")}) {
      const auto r = run_kibench(command);
      INFO(digits << " digits, " << command << ": " << r.err.substr(0, 500));
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Contains("spec.timing.latencyNs.median: not a latency"));
      CHECK(lines_in(r.err) == 1);
    }
  }
  CHECK_FALSE(fs::exists(tmp.path() / "r.html"));
}
