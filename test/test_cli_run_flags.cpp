// Every `kibench run` flag has a range (docs/guide.md): a value outside it
// is refused before any work with exit 2 and a one-line message naming the
// flag, and nothing is written. --max-noise takes a percentage too, and is
// recorded as the same fraction either way.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "lib/json/parse.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

struct BadFlag {
  std::string flag;
  std::string value;
};

// The protocol digest of the one run directory in `out`.
std::string protocol_digest_of(const fs::path &run_dir) {
  const auto digest = run_kibench("digest --json " + quoted(run_dir / "protocol.json"));
  REQUIRE(digest.exit_code == 0);
  return kibench::json::parse(digest.out, "digest stdout").find("digest")->as_string();
}

} // namespace

TEST_CASE("kibench run refuses every flag value outside its range, naming the flag", "[cli][run][flags]") {
  const std::vector<BadFlag> cases{
      // The adversarial pass's reproductions: -1 wrapped to 2^64 - 1 and hung,
      // the others were written into the protocol or exited 3.
      {"--warmup", "-1"},
      {"--timeout", "-5"},
      {"--max-noise", "-1"},
      {"--max-samples", "-1"},
      {"--sustained", "nan"},
      {"--min-time", "nan"},
      {"--timeout", "inf"},
      // And the edges of each range.
      {"--warmup", "100001"},
      {"--warmup", "1.5"},
      {"--warmup", "18446744073709551616"},
      {"--min-samples", "0"},
      {"--min-samples", "100001"},
      {"--min-samples", "+5"},
      {"--max-samples", "0"},
      {"--min-time", "-0.1"},
      {"--min-time", "86401"},
      {"--min-time", "1e400"},
      {"--timeout", "0"},
      {"--timeout", "86401"},
      {"--sustained", "-1"},
      {"--sustained", "3601"},
      {"--sustained", "inf"},
      {"--sustained-rounds", "0"},
      {"--sustained-rounds", "101"},
      {"--sustained-rounds", "1.5"},
      {"--max-noise", "nan"},
      {"--max-noise", "21%"},
      {"--max-noise", "-1%"},
      {"--max-noise", "%"},
      {"--max-noise", "0.5 %"},
      {"--min-time", "1s"},
  };
  for (const BadFlag &c : cases) {
    DYNAMIC_SECTION(c.flag << " '" << c.value << "'") {
      TempDir tmp;
      const fs::path out = tmp.path() / "runs";
      const auto r = run_kibench_within(60, "run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " +
                                                quoted(out) + " " + c.flag + "='" + c.value + "'");
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Contains("kibench: " + c.flag + ": "));
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_FALSE(fs::exists(out));
    }
  }
}

TEST_CASE("a --max-noise above 0.2 as a fraction is refused with the percentage it likely meant",
          "[cli][run][flags]") {
  TempDir tmp;
  const auto r = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " +
                             quoted(tmp.path() / "runs") + " --max-noise 0.5");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--max-noise: 0.5 is a fraction above 0.2") && Contains("did you mean 0.5%?"));
  CHECK_FALSE(fs::exists(tmp.path() / "runs"));
}

TEST_CASE("a --max-noise percentage is recorded as the same fraction: one protocol", "[cli][run][flags]") {
  TempDir tmp;
  const fs::path as_fraction = quick_run_with(tmp.path() / "fraction", "--max-noise 0.007");
  const fs::path as_percentage = quick_run_with(tmp.path() / "percentage", "--max-noise 0.7%");
  CHECK(protocol_digest_of(as_fraction) == protocol_digest_of(as_percentage));
  CHECK_THAT(read_text(as_percentage / "protocol.json"), Contains("0.007"));
  // The default is 0.005 = 0.5 %: the protocol of a run without the flag.
  const fs::path by_default = quick_run_with(tmp.path() / "default", "");
  const fs::path half_percent = quick_run_with(tmp.path() / "half", "--max-noise 0.5%");
  CHECK(protocol_digest_of(by_default) == protocol_digest_of(half_percent));
}

TEST_CASE("flags at the edges of their ranges are accepted", "[cli][run][flags]") {
  TempDir tmp;
  quick_run_with(tmp.path() / "edges",
                 "--warmup 0 --min-time 0 --max-noise 0 --timeout 86400 --sustained 0 --max-samples 1");
  quick_run_with(tmp.path() / "edges2", "--max-noise 20% --sustained 3600 --min-samples 1");
}
