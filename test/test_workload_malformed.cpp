// The malformed-input corpus: every file in test/data/malformed/ must be
// rejected with a one-line InputError that names the file and the problem,
// both by the library (load_workload) and by the CLI (exit code 2, nothing
// written). expected.tsv lists each file, a fragment its message must
// contain, and the command that reads it (run: a workload; digest: a
// manifest for `kibench digest`).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/error.hpp"
#include "lib/workload/workload.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;

namespace {

struct MalformedCase {
  std::string file;
  std::string fragment;
  std::string command; // "run" or "digest"
};

const fs::path &corpus_dir() {
  static const fs::path dir = kibench::test::test_data_dir() / "malformed";
  return dir;
}

std::vector<MalformedCase> read_expected() {
  std::ifstream in(corpus_dir() / "expected.tsv");
  REQUIRE(in);
  std::vector<MalformedCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    const auto tab1 = line.find('\t');
    const auto tab2 = line.find('\t', tab1 + 1);
    INFO("expected.tsv line: " << line);
    REQUIRE(tab1 != std::string::npos);
    REQUIRE(tab2 != std::string::npos);
    cases.push_back({line.substr(0, tab1), line.substr(tab1 + 1, tab2 - tab1 - 1), line.substr(tab2 + 1)});
    REQUIRE((cases.back().command == "run" || cases.back().command == "digest"));
    REQUIRE(!cases.back().fragment.empty());
  }
  return cases;
}

// The InputError message of load_workload(file); fails the test when it
// does not throw one.
std::string load_error(const fs::path &file) {
  try {
    (void)kibench::load_workload(file);
  } catch (const kibench::InputError &e) {
    return e.what();
  }
  FAIL("load_workload accepted " << file);
  return {};
}

bool is_one_line(const std::string &text) {
  const std::string trimmed = text.ends_with('\n') ? text.substr(0, text.size() - 1) : text;
  return !trimmed.empty() && trimmed.find('\n') == std::string::npos;
}

} // namespace

TEST_CASE("the malformed corpus and expected.tsv list the same files", "[workload][malformed]") {
  const auto cases = read_expected();
  std::set<std::string> listed;
  for (const auto &c : cases) CHECK(listed.insert(c.file).second); // no file listed twice

  std::set<std::string> on_disk;
  for (const auto &entry : fs::directory_iterator(corpus_dir())) {
    if (entry.path().extension() == ".json") on_disk.insert(entry.path().filename().string());
  }
  CHECK(listed == on_disk);

  const auto workloads =
      std::count_if(cases.begin(), cases.end(), [](const auto &c) { return c.command == "run"; });
  CHECK(workloads >= 30);
  CHECK(cases.size() - static_cast<std::size_t>(workloads) >= 4);
}

TEST_CASE("load_workload rejects every malformed file with a one-line message", "[workload][malformed]") {
  for (const auto &c : read_expected()) {
    DYNAMIC_SECTION(c.file) {
      const fs::path file = corpus_dir() / c.file;
      const std::string message = load_error(file);
      INFO("message: " << message);
      CHECK(message.find(file.string()) != std::string::npos);
      CHECK(is_one_line(message));
      // The manifests for `kibench digest` are not workloads either; their
      // fragment is the digest command's wording, so only the file is checked.
      if (c.command == "run") CHECK(message.find(c.fragment) != std::string::npos);
    }
  }
}

TEST_CASE("the CLI exits 2 on every malformed file, says why on one line, writes nothing",
          "[workload][malformed][cli]") {
  for (const auto &c : read_expected()) {
    DYNAMIC_SECTION(c.command << " " << c.file) {
      const fs::path file = corpus_dir() / c.file;
      const kibench::test::TempDir tmp;
      const fs::path out = tmp.path() / "out";
      const auto result = c.command == "run"
                              ? kibench::test::run_kibench("run " + kibench::test::quoted(file) + " --out " +
                                                           kibench::test::quoted(out))
                              : kibench::test::run_kibench("digest " + kibench::test::quoted(file));
      INFO("stderr: " << result.err);
      INFO("stdout: " << result.out);
      CHECK(result.exit_code == 2);
      CHECK(is_one_line(result.err));
      CHECK(result.err.find(c.fragment) != std::string::npos);
      CHECK(result.err.find(c.file) != std::string::npos);
      CHECK_FALSE(fs::exists(out));
    }
  }
}
