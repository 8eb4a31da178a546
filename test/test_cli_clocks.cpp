// `kibench run --lock-clocks` from the command line: a value other than
// base or max is refused before any work; on a machine without a GPU the
// run goes on with a note, and its protocol says the clocks were not
// locked.
#include <catch2/catch.hpp>

#include <filesystem>

#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

TEST_CASE("run --lock-clocks: refused values, and a note where there is nothing to lock", "[cli][clocks]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto bogus = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " +
                                 quoted(out) + " " + kQuickSampling + " --lock-clocks boost");
  CHECK(bogus.exit_code == 2);
  CHECK_THAT(bogus.err, Contains("--lock-clocks: \"boost\" is not base or max"));
  CHECK_FALSE(fs::exists(out));

  const auto gpu = run_kibench("list");
  if (gpu.out.find("no GPU") == std::string::npos) {
    WARN("a GPU is here: the no-GPU path is not exercised");
    return;
  }
  const fs::path dir = quick_run_with(out, "--lock-clocks base");
  const auto protocol = kibench::json::parse_file(dir / "protocol.json");
  CHECK_FALSE(kibench::json::member_at(protocol, "spec.devicePolicy.clocksLocked")->as_bool());
  const auto run = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " +
                               quoted(out) + " " + kQuickSampling + " --lock-clocks max");
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Contains("note: --lock-clocks max: no GPU to lock"));
}
