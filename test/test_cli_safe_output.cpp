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

TEST_CASE("export and report --out replace only a regular file or a new path", "[cli][safe-output]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  const fs::path kept = tmp.path() / "kept.csv";
  std::ofstream(kept) << "kept\n";

  SECTION("a FIFO stays a FIFO") {
    const fs::path fifo = tmp.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (const std::string command : {"export", "report"}) { // NOLINT(performance-for-range-copy)
      const auto r = run_kibench_within(60, command + " " + quoted(run) + " --out " + quoted(fifo));
      INFO(command << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err,
                 Contains("--out " + fifo.string() + ": is a FIFO; only a regular file or a new path"));
      CHECK(lines_in(r.err) == 1);
      CHECK(fs::is_fifo(fs::symlink_status(fifo)));
    }
  }
  SECTION("a symbolic link is not followed nor replaced") {
    const fs::path link = tmp.path() / "link.csv";
    fs::create_symlink(kept, link);
    const auto r = run_kibench("export " + quoted(run) + " --out " + quoted(link));
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("is a symbolic link"));
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    CHECK(read_text(kept) == "kept\n");
  }
  SECTION("a socket stays a socket") {
    const fs::path socket_path = tmp.path() / "s";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(socket_path.string().size() < sizeof(address.sun_path));
    std::strcpy(address.sun_path, socket_path.c_str());
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) == 0);
    const auto r = run_kibench("report " + quoted(run) + " --out " + quoted(socket_path));
    ::close(fd);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("is a socket"));
    CHECK(fs::is_socket(fs::symlink_status(socket_path)));
  }
  SECTION("a regular file is replaced whole") {
    const auto r = run_kibench("export " + quoted(run) + " --out " + quoted(kept));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(read_text(kept), StartsWith("run_name,"));
  }
}

TEST_CASE("output that does not reach stdout is exit 3 with the reason", "[cli][safe-output]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  for (const std::string &arguments :
       std::vector<std::string>{"export " + quoted(run), "compare " + quoted(run), "env"}) {
    const auto r = with_stdout_to(arguments, "/dev/full");
    INFO(arguments << ": " << r.err);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains("standard output: cannot write: No space left on device"));
  }
  // The same commands to a file that takes them: exit 0.
  const auto fine = with_stdout_to("export " + quoted(run), quoted(tmp.path() / "out.csv"));
  CHECK(fine.exit_code == 0);
}

TEST_CASE("every numeric flag of compare and report is range-checked, nan and inf included",
          "[cli][safe-output][flags]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  struct Case {
    std::string arguments, expected;
  };
  const std::vector<Case> cases{
      {"compare " + quoted(run) + " --fail-if-slower nan",
       "--fail-if-slower: \"nan\" is not a number of percent"},
      {"compare " + quoted(run) + " --fail-if-slower inf", "--fail-if-slower: \"inf\" is not a number"},
      {"compare " + quoted(run) + " --fail-if-slower -1", "--fail-if-slower: \"-1\" is not a number"},
      {"compare " + quoted(run) + " --fail-if-slower 1e7", "--fail-if-slower: \"1e7\" is not a number"},
      {"compare " + quoted(run) + " --resamples nan", "--resamples: \"nan\" is not a whole number in [100, "},
      {"compare " + quoted(run) + " --resamples 99", "--resamples: \"99\" is not a whole number"},
      {"compare " + quoted(run) + " --seed -1", "--seed: \"-1\" is not a whole number"},
      {"compare " + quoted(run) + " --seed 1.5", "--seed: \"1.5\" is not a whole number"},
      {"report " + quoted(run) + " --out " + quoted(tmp.path() / "r.html") + " --resamples inf",
       "--resamples: \"inf\" is not a whole number"},
      {"report " + quoted(run) + " --out " + quoted(tmp.path() / "r.html") + " --seed 1e3",
       "--seed: \"1e3\" is not a whole number"},
  };
  for (const Case &c : cases) {
    const auto r = run_kibench(c.arguments);
    INFO(c.arguments << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(c.expected));
    CHECK(lines_in(r.err) == 1);
    CHECK(r.out.empty());
  }
  CHECK_FALSE(fs::exists(tmp.path() / "r.html"));
  // The ends of each range are taken.
  const auto ends = run_kibench("compare " + quoted(run) + " --seed 18446744073709551615 --resamples 100");
  INFO(ends.err);
  CHECK(ends.exit_code == 0);
}

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

TEST_CASE("digest --verify reads a folder of run folders, and nothing to verify is exit 2",
          "[cli][digest][safe-output]") {
  TempDir tmp;
  const fs::path runs = tmp.path() / "runs";
  const fs::path first = quick_run(runs);
  const fs::path second = quick_run_with(runs, "--label second");
  const auto r = run_kibench("digest --verify " + quoted(runs));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("ok  " + (first / kRunFile).string()));
  CHECK_THAT(r.out, Contains("ok  " + (second / kRunFile).string()));

  const fs::path empty = tmp.path() / "empty";
  fs::create_directories(empty / "not-a-run");
  const auto nothing = run_kibench("digest --verify " + quoted(empty));
  INFO(nothing.out << nothing.err);
  CHECK(nothing.exit_code == 2);
  CHECK_THAT(nothing.err, Contains("nothing to verify"));
}

TEST_CASE("export writes the statistics of the raw samples, not an edited median",
          "[cli][export][safe-output]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  const kibench::json::Value original = kibench::json::parse_file(run / kRunFile);
  const kibench::json::Value *median =
      original.find("spec")->find("timing")->find("latencyNs")->find("median");
  REQUIRE(median != nullptr);
  const std::string recorded = kibench::json::format_number(median->as_number());
  edit_json(run / kRunFile, {"spec", "timing", "latencyNs", "median"}, 1);

  const auto r = run_kibench("export " + quoted(run));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Contains("differs from the median it reports (1 ns); the raw samples are used"));
  // The median_ns column holds the samples' median: the one run recorded.
  std::istringstream csv(r.out);
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  std::size_t column = 0;
  for (std::size_t at = 0; at < header.find("median_ns"); ++at) column += header[at] == ',' ? 1 : 0;
  std::size_t start = 0;
  for (std::size_t k = 0; k < column; ++k) start = row.find(',', start) + 1;
  CHECK(row.substr(start, row.find(',', start) - start) == recorded);
}

TEST_CASE("a killed writer's leftovers are swept by the next write of the same file",
          "[cli][safe-output][sweep]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  const fs::path out = tmp.path() / "runs.csv";
  // What a kill -9 between mkstemp and rename leaves: a hidden temporary
  // nobody holds. One a live writer holds (its flock) is left alone.
  const fs::path abandoned = tmp.path() / ".runs.csv.Ab12Cd";
  const fs::path held = tmp.path() / ".runs.csv.Zz98Yx";
  std::ofstream(abandoned) << "half a CSV";
  std::ofstream(held) << "being written";
  const int fd = ::open(held.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  const auto r = run_kibench("export " + quoted(run) + " --out " + quoted(out));
  ::close(fd);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(abandoned));
  CHECK(fs::exists(held));
  CHECK(fs::exists(out));
}

TEST_CASE("a staged run directory keeps its lock file until it has its name", "[cli][safe-output][sweep]") {
  // A complete staging directory without its lock file (what a kill between
  // the lock file's removal and the rename left) was never swept; the lock
  // file now goes only after the rename, so a kill before it leaves a
  // directory the next run removes.
  TempDir tmp;
  const fs::path runs = tmp.path() / "runs";
  const fs::path first = quick_run(runs);
  CHECK_FALSE(fs::exists(first / ".kibench-writer.lock"));
  const fs::path staged = runs / ".x.partial-Ab12Cd";
  fs::create_directories(staged);
  std::ofstream(staged / "run.cpu-reference.json") << "{}";
  std::ofstream(staged / ".kibench-writer.lock") << "kibench writer, pid 1\n";
  quick_run(runs);
  CHECK_FALSE(fs::exists(staged));
}

TEST_CASE("an implementation named in --impl that cannot run here is exit 2 before any work",
          "[cli][safe-output][impl]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  // No device visible: fused needs one.
  const auto r = run_command("CUDA_VISIBLE_DEVICES= '" + std::string(KIBENCH_BINARY) + "' run " +
                             quoted(kSmallWorkload) + " --impl cpu-reference,fused --out " + quoted(out) +
                             " " + kQuickSampling);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--impl fused: needs a GPU and cannot run here"));
  CHECK(lines_in(r.err) == 1);
  CHECK_FALSE(fs::exists(out));
  // The default list only says what it skips.
  const auto defaults = run_command("CUDA_VISIBLE_DEVICES= '" + std::string(KIBENCH_BINARY) + "' run " +
                                    quoted(kSmallWorkload) + " --out " + quoted(out) + " " + kQuickSampling);
  INFO(defaults.err);
  CHECK(defaults.exit_code == 0);
  CHECK_THAT(defaults.err, Contains("GPU implementations skipped"));
}

TEST_CASE("axis sweeps (--axis) of jsd and fused_linear_jsd on their own axes; an axis they lack is exit 2",
          "[cli][sweep][safe-output]") {
  TempDir tmp;
  const fs::path jsd = kSourceDir / "workloads/jsd/small/jsd-small-t32-v1000.json";
  const fs::path linear =
      kSourceDir / "workloads/fused_linear_jsd/small/fused-linear-jsd-small-t32-h64-v1000.json";
  const fs::path out = tmp.path() / "runs";
  const auto swept = run_kibench("run " + quoted(jsd) + " " + quoted(linear) +
                                 " --impl cpu-reference --axis tokens=8,16 --axis vocab=500 --out " +
                                 quoted(out) + " " + kQuickSampling);
  INFO(swept.out << swept.err);
  REQUIRE(swept.exit_code == 0);
  const auto dirs = directories_in(out);
  REQUIRE(dirs.size() == 4);
  std::vector<std::string> names;
  for (const fs::path &dir : dirs) {
    const kibench::json::Value workload = kibench::json::parse_file(dir / "workload.json");
    names.push_back(workload.find("metadata")->find("name")->as_string());
    CHECK(workload.find("spec")->find("axes")->find("vocab")->as_int() == 500);
    CHECK(run_kibench("digest --verify " + quoted(dir)).exit_code == 0);
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"fused-linear-jsd-hidden64-tokens16-vocab500-bf16",
                                          "fused-linear-jsd-hidden64-tokens8-vocab500-bf16",
                                          "jsd-tokens16-vocab500-fp32", "jsd-tokens8-vocab500-fp32"});

  const auto lacking =
      run_kibench("run " + quoted(jsd) + " --impl cpu-reference --axis hidden=64,128 --out " +
                  quoted(tmp.path() / "none"));
  INFO(lacking.err);
  CHECK(lacking.exit_code == 2);
  CHECK_THAT(lacking.err,
             Contains("--axis: hidden: ") && Contains("(jsd) has no axis hidden (its axes: tokens, vocab)"));
  CHECK(lines_in(lacking.err) == 1);
  CHECK_FALSE(fs::exists(tmp.path() / "none"));
}

TEST_CASE("an output whose reference is zero records no relative error", "[cli][safe-output][correctness]") {
  TempDir tmp;
  // Every token ignored: the loss and its gradients are exactly zero.
  const fs::path run =
      quick_run(tmp.path() / "runs", kSourceDir / "workloads/small/small-v1000-h64-t32-all-ignored.json");
  const kibench::json::Value manifest = kibench::json::parse_file(run / kRunFile);
  const kibench::json::Value *correctness = manifest.find("spec")->find("correctness");
  REQUIRE(correctness != nullptr);
  // 1.797e308 was written for the relative error of a zero reference.
  CHECK(correctness->find("maximumRelativeError") == nullptr);
  REQUIRE(correctness->find("maximumAbsoluteError") != nullptr);
  CHECK(correctness->find("maximumAbsoluteError")->as_number() < 1.0);
  const auto csv = run_kibench("export " + quoted(run));
  CHECK(csv.exit_code == 0);
  CHECK(csv.out.find("1.7976931348623157e+308") == std::string::npos);
}

TEST_CASE("smaller refusals: an empty --lock-clocks, a long --impl name, a --plugin that is no file, a run "
          "given twice",
          "[cli][safe-output][small]") {
  TempDir tmp;
  const fs::path run = quick_run(tmp.path() / "runs");
  const auto empty_lock =
      run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --lock-clocks '' --out " +
                  quoted(tmp.path() / "x"));
  CHECK(empty_lock.exit_code == 2);
  CHECK_THAT(empty_lock.err, Contains("--lock-clocks: \"\" is not base or max"));

  const auto long_name = run_kibench("run " + quoted(kSmallWorkload) + " --impl " + std::string(100000, 'n') +
                                     " --out " + quoted(tmp.path() / "x"));
  CHECK(long_name.exit_code == 2);
  CHECK_THAT(long_name.err, Contains("(100000 bytes)"));
  CHECK(long_name.err.size() < 400);

  const fs::path fifo = tmp.path() / "plugin-fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const fs::path &plugin : {fifo, tmp.path()}) {
    const auto r = run_kibench_within(30, "run " + quoted(kSmallWorkload) + " --plugin " + quoted(plugin) +
                                              " --impl cpu-reference --out " + quoted(tmp.path() / "x"));
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--plugin: is a"));
    CHECK_THAT(r.err, !Contains("no such file"));
  }
  CHECK_FALSE(fs::exists(tmp.path() / "x"));

  // The same run twice: read once, with a note.
  for (const std::string command : {"export", "compare"}) { // NOLINT(performance-for-range-copy)
    const auto twice = run_kibench(command + " " + quoted(run) + " " + quoted(run / kRunFile));
    INFO(command << ": " << twice.err);
    CHECK(twice.exit_code == 0);
    CHECK_THAT(twice.out + twice.err, Contains("named again (" + (run / kRunFile).string() + "): read once"));
  }
  const auto csv = run_kibench("export " + quoted(run) + " " + quoted(run));
  CHECK(lines_in(csv.out) == 2); // the header and one row
}
