// Whatever `kibench run` accepts, `digest --verify` and `compare` read back
// from the run directory it writes. Numbers JCS writes as long integers
// (1e20 is 100000000000000000000) and fractions of more digits than a
// 64-bit integer holds used to make the written run "invalid JSON".
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

// The small workload with `from` replaced by `to` (each must occur once).
fs::path variant(const fs::path &folder, const std::string &name,
                 const std::vector<std::pair<std::string, std::string>> &replacements) {
  std::string text = read_text(kSmallWorkload);
  for (const auto &[from, to] : replacements) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    REQUIRE(text.find(from, at + 1) == std::string::npos);
    text.replace(at, from.size(), to);
  }
  const fs::path file = folder / (name + ".json");
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

} // namespace

TEST_CASE("what kibench run accepts, digest --verify and compare read back", "[cli][run][round-trip]") {
  TempDir tmp;
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> cases{
      // The adversarial pass's reproduction.
      {"big-and-long",
       {{"\"maxRelativeError\": 0.01", "\"maxRelativeError\": 1e20"},
        {"\"maxAbsoluteError\": 0.000001", "\"maxAbsoluteError\": 0.0012345678901234567"}}},
      // Integers past 64 bits, long fractions and exponents elsewhere too.
      {"long-literals",
       {{"\"maxRelativeError\": 0.01", "\"maxRelativeError\": 123456789012345678901234567890"},
        {"\"maxAbsoluteError\": 0.000001", "\"maxAbsoluteError\": 1.0000000000000000000000001e-6"},
        {"\"low\": -0.125", "\"low\": -0.12500000000000000000000000000001"},
        {"\"seed\": 1005", "\"seed\": 9007199254740991"}}},
      {"extremes",
       {{"\"maxRelativeError\": 0.01", "\"maxRelativeError\": 1.7976931348623157e308"},
        {"\"maxAbsoluteError\": 0.000001", "\"maxAbsoluteError\": 5e-324"}}},
  };
  for (const auto &[name, replacements] : cases) {
    DYNAMIC_SECTION(name) {
      const fs::path workload = variant(tmp.path(), name, replacements);
      const fs::path run_dir = quick_run(tmp.path() / ("runs-" + name), workload);

      const auto verified = run_kibench("digest --verify " + quoted(run_dir));
      INFO(verified.out << verified.err);
      CHECK(verified.exit_code == 0);
      CHECK_THAT(verified.out, Contains("comparison key  sha256:"));

      const auto compared = run_kibench("compare " + quoted(run_dir));
      INFO(compared.out << compared.err);
      CHECK(compared.exit_code == 0);
      CHECK_THAT(compared.out, Contains("1 run in 1 cohort"));

      const auto report =
          run_kibench("report " + quoted(run_dir) + " --out " + quoted(tmp.path() / "r.html"));
      INFO(report.err);
      CHECK(report.exit_code == 0);
    }
  }
}
