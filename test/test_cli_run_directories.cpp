// A run directory appears whole or not at all, and a run never fails for
// want of a name: readers pass over staging directories, a later run sweeps
// those of killed writers (and nobody else's), two runs of one millisecond
// both keep their measurements, and an --out or --save-tensors that cannot
// be written is refused before any work.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/io/atomic_write.hpp"
#include "lib/json/parse.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

// The hidden staging directories in `folder`.
std::vector<fs::path> staging_directories_in(const fs::path &folder) {
  std::vector<fs::path> out;
  for (const auto &dir : directories_in(folder))
    if (dir.filename().string().find(".partial-") != std::string::npos) out.push_back(dir);
  return out;
}

// What a writer killed while writing leaves: a child process stages a
// directory under `folder`, writes a file into it and dies without
// cleaning up (as kill -9 would leave it).
fs::path staged_by_killed_writer(const fs::path &folder, const std::string &name) {
  const auto before = staging_directories_in(folder);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    kibench::io::StagedDirectory dir(folder / name);
    dir.write("run.cpu-reference.json", "{}\n");
    ::_exit(0); // no destructor runs: the staging directory stays
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  for (const auto &dir : staging_directories_in(folder))
    if (std::find(before.begin(), before.end(), dir) == before.end()) return dir;
  FAIL("the killed writer left no staging directory in " << folder);
  return {};
}

} // namespace

TEST_CASE("compare and report pass over a half-written run directory", "[cli][run][staging]") {
  TempDir tmp;
  const fs::path runs = tmp.path() / "runs";
  const fs::path run = quick_run(runs);
  // A second run killed while its manifests were written: staged under
  // the hidden name, its files (here a whole copy) never renamed into place.
  const fs::path partial = runs / ("." + run.filename().string() + ".partial-Kx81Qz");
  fs::copy(run, partial, fs::copy_options::recursive);

  const auto compared = run_kibench("compare " + quoted(runs) + " --format json");
  INFO(compared.err);
  REQUIRE(compared.exit_code == 0);
  const auto document = kibench::json::parse(compared.out, "compare stdout");
  CHECK(document.find("runs")->as_array().size() == 1);

  const auto report = run_kibench("report " + quoted(runs) + " --out " + quoted(tmp.path() / "r.html"));
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  CHECK_THAT(report.out, Contains("(1 run,"));
}

TEST_CASE("a later kibench run sweeps the staging directories of killed writers, and only those",
          "[cli][run][staging]") {
  TempDir tmp;
  const fs::path runs = tmp.path() / "runs";
  fs::create_directories(runs);
  const fs::path killed = staged_by_killed_writer(runs, "2026-01-01T00-00-00.000Z-killed-full");

  // A writer still at work: this process, holding its staging directory.
  kibench::io::StagedDirectory alive(runs / "2026-01-01T00-00-00.000Z-alive-full");
  alive.write("run.cpu-reference.json", "{}\n");
  // A hidden directory of the same shape that no kibench writer marked.
  const fs::path foreign = runs / ".someone-elses.partial-Ab12Cd";
  fs::create_directories(foreign);
  std::ofstream(foreign / "notes.txt") << "not kibench's\n";

  quick_run(runs);
  CHECK_FALSE(fs::exists(killed));
  CHECK(fs::is_directory(alive.staging_path()));
  CHECK(fs::exists(foreign / "notes.txt"));

  SECTION("a killed writer's directory that belongs to another user stays") {
    if (::geteuid() != 0) {
      WARN("not root: cannot give a directory to another user here");
      return;
    }
    const fs::path other = staged_by_killed_writer(runs, "2026-01-01T00-00-00.000Z-other-full");
    REQUIRE(::chown(other.c_str(), 4242, 4242) == 0);
    quick_run(runs);
    CHECK(fs::is_directory(other));
  }
}

TEST_CASE("two runs of the same millisecond into one folder both keep their directories",
          "[cli][run][staging]") {
  TempDir tmp;
  const fs::path wanted = tmp.path() / "2026-01-01T00-00-00.000Z-small-full";
  // Both start before either has finished, as two concurrent runs do.
  kibench::io::StagedDirectory first(wanted);
  kibench::io::StagedDirectory second(wanted);
  first.write("run.a.json", "{\"first\": true}\n");
  second.write("run.a.json", "{\"second\": true}\n");
  first.commit();
  REQUIRE_NOTHROW(second.commit());
  CHECK(first.final_path() == wanted);
  CHECK(second.final_path() == fs::path(wanted.string() + "-2"));
  CHECK(read_text(wanted / "run.a.json") == "{\"first\": true}\n");
  CHECK(read_text(second.final_path() / "run.a.json") == "{\"second\": true}\n");

  // A third, begun after both are in place, takes the next number.
  std::optional<kibench::io::StagedDirectory> third;
  REQUIRE_NOTHROW(third.emplace(wanted));
  third->write("run.a.json", "{}\n");
  third->commit();
  CHECK(third->final_path() == fs::path(wanted.string() + "-3"));
  CHECK(staging_directories_in(tmp.path()).empty());
}

TEST_CASE("an --out or --save-tensors that cannot be written are refused before any work", "[cli][run]") {
  TempDir tmp;
  const fs::path file = tmp.path() / "a-file";
  std::ofstream(file) << "in the way\n";
  const fs::path dangling = tmp.path() / "dangling";
  fs::create_symlink(tmp.path() / "nowhere", dangling);
  const fs::path read_only = tmp.path() / "read-only";
  fs::create_directories(read_only);
  fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);

  struct Case {
    std::string what;
    fs::path folder;
    std::string reason;
  };
  std::vector<Case> cases{
      {"a file", file, "exists and is not a folder"},
      {"under a file", file / "runs", "cannot create the folder"},
      {"a dangling link", dangling, "a dangling link"},
      // /proc takes no new files, not even from root.
      {"a folder nothing can be written in", "/proc", "cannot write in it"},
  };
  if (::geteuid() != 0) cases.push_back({"a read-only folder", read_only, "cannot write in it"});

  for (const auto &flag : {std::string("--out"), std::string("--save-tensors")}) {
    for (const Case &c : cases) {
      DYNAMIC_SECTION(flag << " " << c.what) {
        const fs::path out = tmp.path() / "runs";
        const std::string folders = flag == "--out"
                                        ? "--out " + quoted(c.folder)
                                        : "--out " + quoted(out) + " --save-tensors " + quoted(c.folder);
        const auto r = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference " + folders +
                                   " " + kQuickSampling);
        INFO(r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(flag + " " + c.folder.string() + ": " + c.reason));
        // Refused before the oracle ran or a sample was taken, and nothing
        // left behind (not even the --out it had to create first).
        CHECK_THAT(r.err, !Contains("sample"));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(out));
        CHECK(fs::is_regular_file(file));
      }
    }
  }
}
