// Names and notes come from files anyone can write. What reaches a terminal
// shows control characters as escapes (an ANSI sequence never acts), and
// `compare --format markdown`, made for CI job summaries, never lets one
// become HTML, inside a code span or out of it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

const std::string kHostileName = "<img src=x onerror=alert(1)>`|\x1b[31mred\x1b[0m";

// Sets metadata.name (outside the digest: every reference still resolves)
// of a manifest file.
void rename_manifest(const fs::path &file, const std::string &name) {
  kibench::json::Value manifest = kibench::json::parse_file(file);
  manifest.as_object().find("metadata")->as_object().set("name", name);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << kibench::json::pretty(manifest) << "\n";
}

// Markdown with its code spans taken out (CommonMark: a span runs from a
// string of n backticks to the next string of exactly n).
std::string outside_code_spans(const std::string &markdown) {
  std::string out;
  std::size_t i = 0;
  const auto run_at = [&](std::size_t at) {
    std::size_t n = 0;
    while (at + n < markdown.size() && markdown[at + n] == '`') ++n;
    return n;
  };
  while (i < markdown.size()) {
    const std::size_t n = run_at(i);
    if (n == 0) {
      out += markdown[i++];
      continue;
    }
    std::size_t close = i + n;
    while (close < markdown.size()) {
      const std::size_t m = run_at(close);
      if (m == n) break;
      close += m == 0 ? 1 : m;
    }
    if (close >= markdown.size()) {
      out.append(markdown, i, n); // no closing run: literal backticks
      i += n;
    } else {
      i = close + n;
    }
  }
  return out;
}

} // namespace

TEST_CASE("compare shows hostile names escaped, in every format", "[cli][compare][escaping]") {
  TempDir tmp;
  // Two protocols (other warm-up counts), so that the reasons name both.
  const fs::path first = quick_run_with(tmp.path() / "a", "--warmup 0");
  const fs::path second = quick_run_with(tmp.path() / "b", "--warmup 1");
  rename_manifest(first / "protocol.json", kHostileName);
  rename_manifest(second / "protocol.json", kHostileName + " two");
  rename_manifest(first / "workload.json", "workload\r\n> forged line");

  const auto table = run_kibench("compare --verbose " + quoted(first) + " " + quoted(second));
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find('\x1b') == std::string::npos);
  CHECK(table.out.find('\r') == std::string::npos);
  CHECK_THAT(table.out, Contains("\\x1b[31mred\\x1b[0m"));
  CHECK_THAT(table.out, !Contains("\n> forged line"));

  const auto markdown = run_kibench("compare " + quoted(first) + " " + quoted(second) + " --format markdown");
  INFO(markdown.out << markdown.err);
  REQUIRE(markdown.exit_code == 0);
  CHECK(markdown.out.find('\x1b') == std::string::npos);
  CHECK_THAT(markdown.out, !Contains("\n> forged line"));
  // In a code span, fenced past its backtick, the name is shown as it is;
  // outside code spans (the reasons name both protocols), as entities.
  CHECK_THAT(markdown.out, Contains("``<img src=x onerror=alert(1)>`|\\x1b[31mred\\x1b[0m``"));
  CHECK_THAT(markdown.out, Contains("protocol &lt;img src=x onerror=alert(1)&gt;`\\|"));
  const std::string prose = outside_code_spans(markdown.out);
  CHECK_THAT(prose, !Contains("<img") && !Contains("onerror=alert(1)>"));
  CHECK(prose.find('<') == prose.find("<br>"));
}
