// `kibench run --axis` and `--label` end to end on the CPU: derived
// workloads written and hashed like files, each workload's table printed
// as it completes with progress around it, labels carried into the
// manifests and shown by compare and report, and every bad value refused
// before any work.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "lib/digest/digest.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

std::size_t count_of(const std::string &text, const std::string &needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// kibench with stdout and stderr in one stream (out), in the order written:
// the inner group's stderr joins its stdout before run_command's own
// redirections apply to the outer group.
ProcessResult run_kibench_interleaved(const std::string &arguments) {
  return run_command("{ { '" + std::string(KIBENCH_BINARY) + "' " + arguments + " ; } 2>&1 ; }");
}

} // namespace

TEST_CASE("run --axis runs every combination, each written and hashed like a workload file", "[cli][sweep]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto run =
      run_kibench_interleaved("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " + quoted(out) +
                              " " + kQuickSampling + " --axis tokens=16,32 --axis vocab=[1000:1003:3]");
  INFO(run.out);
  REQUIRE(run.exit_code == 0);
  const auto dirs = directories_in(out);
  REQUIRE(dirs.size() == 4);
  std::vector<std::string> names;
  for (const fs::path &dir : dirs) {
    const auto workload = kibench::json::parse_file(dir / "workload.json");
    names.push_back(kibench::json::string_at(workload, "metadata.name"));
    const auto verify = run_kibench("digest --verify " + quoted(dir));
    INFO(verify.out << verify.err);
    CHECK(verify.exit_code == 0);
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"distill-jsd-loss-hidden64-tokens16-vocab1000-bf16",
                                          "distill-jsd-loss-hidden64-tokens16-vocab1003-bf16",
                                          "distill-jsd-loss-hidden64-tokens32-vocab1000-bf16",
                                          "distill-jsd-loss-hidden64-tokens32-vocab1003-bf16"});
  // At the base's own shape the derived case is the base: the same digest.
  for (const fs::path &dir : dirs) {
    const auto workload = kibench::json::parse_file(dir / "workload.json");
    if (kibench::json::string_at(workload, "metadata.name") !=
        "distill-jsd-loss-hidden64-tokens32-vocab1000-bf16")
      continue;
    CHECK(kibench::manifest_digest(workload) ==
          kibench::manifest_digest(kibench::json::parse_file(kSmallWorkload)));
  }

  // Each table as its workload completes: the first table comes before
  // the second workload's progress, and every workload says which of how
  // many it is.
  const std::size_t first_table = run.out.find("\ndistill-jsd-loss-hidden64-tokens16-vocab1000-bf16  (T=16");
  const std::size_t second_workload = run.out.find("[2/4] distill-jsd-loss-hidden64-tokens16-vocab1003-bf16");
  REQUIRE(first_table != std::string::npos);
  REQUIRE(second_workload != std::string::npos);
  CHECK(first_table < second_workload);
  for (const char *tag : {"[1/4] ", "[2/4] ", "[3/4] ", "[4/4] "}) CHECK_THAT(run.out, Contains(tag));
  CHECK(count_of(run.out, "written: ") == 4);
  CHECK_THAT(run.out, Contains("· cpu-reference · done: 3 samples"));
  // Three samples stop at the cap: the table's stop column says so.
  CHECK_THAT(run.out, Contains("      3    n cap "));
}

TEST_CASE("run --axis refuses a bad axis before any work, naming the flag", "[cli][sweep]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  for (const auto &[axis, why] : std::vector<std::pair<std::string, std::string>>{
           {"batch=4", "--axis: unknown axis \"batch\""},
           {"tokens=0", "--axis: tokens: \"0\" is not a whole number"},
           {"tokens=64:8:pow2", "runs backwards"},
           {"tokens", "is not NAME=VALUES"}}) {
    CAPTURE(axis);
    const auto run = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " +
                                 quoted(out) + " " + kQuickSampling + " --axis " + axis);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains(why));
    CHECK(count_of(run.err, "\n") == 1);
    CHECK_FALSE(fs::exists(out));
  }
  const auto twice = run_kibench("run " + quoted(kSmallWorkload) + " --out " + quoted(out) +
                                 " --axis tokens=16 --axis tokens=32");
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.err, Contains("--axis: tokens given twice"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("run --label names the runs: compare and report show it in place of a number", "[cli][label]") {
  TempDir tmp;
  const fs::path main_dir = quick_run_with(tmp.path() / "main", "--label main");
  const fs::path pr_dir = quick_run_with(tmp.path() / "pr", "--label pr-7");
  const auto run_manifest = kibench::json::parse_file(main_dir / "run.cpu-reference.json");
  CHECK(kibench::json::string_at(run_manifest, "metadata.labels.run_label") == "main");
  // Outside the digest: a label never splits a cohort.
  const auto compare = run_kibench("compare " + quoted(main_dir) + " " + quoted(pr_dir));
  INFO(compare.out << compare.err);
  CHECK(compare.exit_code == 0);
  CHECK_THAT(compare.out, Contains("in 1 cohort"));
  CHECK_THAT(compare.out, Contains("cpu-reference[main]"));
  CHECK_THAT(compare.out, Contains("cpu-reference[pr-7]"));
  CHECK_THAT(compare.out, !Contains("cpu-reference[1]"));

  const fs::path page = tmp.path() / "report.html";
  const auto report =
      run_kibench("report " + quoted(main_dir) + " " + quoted(pr_dir) + " --out " + quoted(page));
  INFO(report.out << report.err);
  REQUIRE(report.exit_code == 0);
  CHECK_THAT(read_text(page), Contains("cpu-reference[main]") && Contains("cpu-reference[pr-7]"));

  // Unlabelled runs are still numbered; two runs sharing a label are too.
  const fs::path plain = quick_run(tmp.path() / "plain");
  const fs::path main_again = quick_run_with(tmp.path() / "main2", "--label main");
  const auto mixed =
      run_kibench("compare " + quoted(main_dir) + " " + quoted(main_again) + " " + quoted(plain));
  CHECK_THAT(mixed.out, Contains("cpu-reference[main 1]") && Contains("cpu-reference[main 2]") &&
                            Contains("cpu-reference[1]"));
}

TEST_CASE("run --label refuses a bad label or a second one, naming the flag", "[cli][label]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  for (const auto &[flags, why] : std::vector<std::pair<std::string, std::string>>{
           {"--label 'a b'", "--label: \"a b\" is not a label"},
           {"--label ''", "--label: \"\" is not a label"},
           {"--label " + std::string(65, 'x'), "1 to 64 letters"},
           {"--label main --label pr", "--label: given 2 times"}}) {
    CAPTURE(flags);
    const auto run = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " +
                                 quoted(out) + " " + kQuickSampling + " " + flags);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Contains(why));
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("report charts a sweep over any axis: the imported Liger V sweep and a run --axis vocab sweep",
          "[cli][sweep][report]") {
  TempDir tmp;
  const fs::path imported = tmp.path() / "imported";
  const auto import =
      run_kibench("import liger " + quoted(kSourceDir / "test/data/liger/jsd-family-rows.csv") + " --out " +
                  quoted(imported));
  INFO(import.out << import.err);
  REQUIRE(import.exit_code == 0);
  const fs::path liger_page = tmp.path() / "liger.html";
  const auto liger = run_kibench("report " + quoted(imported) + " --out " + quoted(liger_page));
  INFO(liger.out << liger.err);
  REQUIRE(liger.exit_code == 0);
  const std::string liger_html = read_text(liger_page);
  // Liger's jsd rows at T = 8192 on one GPU, V from 4096 to 131072.
  CHECK_THAT(liger_html, Contains("<dt>V</dt><dd>4096, 8192, 16384, 32768, 65536, 131072</dd>"));
  CHECK_THAT(liger_html, Contains("Median latency vs V: liger-jsd (tokens 8192)"));
  CHECK_THAT(liger_html, Contains("<dt>T</dt><dd>1024, 2048, 4096, 8192</dd>"));

  const fs::path out = tmp.path() / "runs";
  const auto run =
      run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " + quoted(out) + " " +
                  kQuickSampling + " --axis tokens=16 --axis vocab=1000,1003,2000");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const fs::path page = tmp.path() / "sweep.html";
  const auto report = run_kibench("report " + quoted(out) + " --out " + quoted(page));
  INFO(report.out << report.err);
  REQUIRE(report.exit_code == 0);
  CHECK_THAT(report.out, Contains("1 sweep"));
  const std::string html = read_text(page);
  CHECK_THAT(html, Contains("<dt>V</dt><dd>1000, 1003, 2000</dd>"));
  CHECK_THAT(html, Contains("data-testid=\"chart-sweep-time-"));

  // Two values are a case and its edge case, not a trend: no sweep.
  const fs::path pair = tmp.path() / "pair";
  const auto two = run_kibench("run " + quoted(kSmallWorkload) + " --impl cpu-reference --out " + quoted(pair) +
                               " " + kQuickSampling + " --axis vocab=1000,1003");
  REQUIRE(two.exit_code == 0);
  const fs::path pair_page = tmp.path() / "pair.html";
  const auto pair_report = run_kibench("report " + quoted(pair) + " --out " + quoted(pair_page));
  INFO(pair_report.out << pair_report.err);
  REQUIRE(pair_report.exit_code == 0);
  CHECK_THAT(pair_report.out, Contains("0 sweeps"));
  CHECK_THAT(read_text(pair_page), !Contains("id=\"sweeps\""));
}
