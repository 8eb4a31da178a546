// compare on a multi-workload run: one screen (a workload × implementation
// summary) by default, every cohort in full with --verbose.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <utility>

#include "lib/compare/report_text.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

TEST_CASE("compare: several workloads are summarized on one screen, --verbose shows every cohort",
          "[cli][compare]") {
  TempDir tmp;
  const fs::path small = source_dir() / "workloads/small";
  const auto run = run_kibench(
      "run " + quoted(small / "small-v1000-h64-t32.json") + " " + quoted(small / "small-v1000-h64-t32-tau2.json") +
      " " + quoted(small / "small-v1003-h64-t32-odd-vocab.json") + " --plugin " + quoted(KIBENCH_EXAMPLE_PLUGIN) +
      " --impl cpu-reference,example-cpu-fp32 --min-samples 5 --max-samples 5 --min-time 0 --warmup 1 --out " +
      quoted(tmp.path()));
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);

  const auto summary = run_kibench("compare " + quoted(tmp.path()));
  INFO(summary.out << summary.err);
  REQUIRE(summary.exit_code == 0);
  CHECK_THAT(summary.out, Contains("summary: 3 workloads × 2 implementation runs"));
  // Rows named by what sets the workloads apart, a cell per implementation.
  CHECK_THAT(summary.out, Contains("\n  tau2-hidden64-tokens32-vocab1000 "));
  CHECK_THAT(summary.out, Contains("\n  odd-vocab-hidden64-tokens32-vocab1003 "));
  CHECK_THAT(summary.out, Contains("baseline"));
  CHECK_THAT(summary.out, Contains("× ["));
  CHECK_THAT(summary.out, !Contains("compatible_workload view"));
  CHECK_THAT(summary.out, Contains("4 runs outside the baseline's cohort, each also viewed against it"));
  CHECK(std::count(summary.out.begin(), summary.out.end(), '\n') < 30);

  const auto verbose = run_kibench("compare --verbose " + quoted(tmp.path()));
  INFO(verbose.out);
  REQUIRE(verbose.exit_code == 0);
  CHECK_THAT(verbose.out, Contains("cohort 3 of 3"));
  CHECK_THAT(verbose.out, Contains("compatible_workload view"));
  CHECK_THAT(verbose.out, Contains("summary: 3 workloads × 2 implementation runs"));

  // A second invocation with a label: each run keeps a column of its own.
  const auto again = run_kibench(
      "run " + quoted(small / "small-v1000-h64-t32.json") + " " + quoted(small / "small-v1000-h64-t32-tau2.json") +
      " " + quoted(small / "small-v1003-h64-t32-odd-vocab.json") + " --plugin " + quoted(KIBENCH_EXAMPLE_PLUGIN) +
      " --impl cpu-reference,example-cpu-fp32 --min-samples 5 --max-samples 5 --min-time 0 --warmup 1 --label b" +
      " --out " + quoted(tmp.path() / "b"));
  INFO(again.out << again.err);
  REQUIRE(again.exit_code == 0);
  const auto both = run_kibench("compare " + quoted(tmp.path()) + " " + quoted(tmp.path() / "b"));
  INFO(both.out << both.err);
  REQUIRE(both.exit_code == 0);
  CHECK_THAT(both.out, Contains("summary: 3 workloads × 4 implementation runs"));
  CHECK_THAT(both.out, Contains("cpu-reference[b]"));
  CHECK_THAT(both.out, Contains("example-cpu-fp32[b]"));
  CHECK(std::count(both.out.begin(), both.out.end(), '\n') < 30);
}

TEST_CASE("compare: a relative bound below −100 % is shown at −100 %", "[compare]") {
  kibench::compare::PairComparison c;
  c.relative_effect = -0.3117;
  c.relative_low = -1.0687;
  c.relative_high = 0.5564;
  CHECK(kibench::compare::text::relative_difference(c) == "−31.17 % [−100.00 %, +55.64 %]");
}

TEST_CASE("run --check-only: one checked invocation per implementation, the verdicts printed, nothing written",
          "[cli]") {
  TempDir tmp;
  const fs::path small = source_dir() / "workloads/small/small-v1000-h64-t32.json";
  const auto ok = run_kibench("run " + quoted(small) + " --plugin " + quoted(KIBENCH_EXAMPLE_PLUGIN) +
                              " --impl cpu-reference,example-cpu-fp32 --check-only --out " + quoted(tmp.path() / "runs"));
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Contains("one invocation each, nothing timed"));
  CHECK_THAT(ok.out, Contains("\nexample-cpu-fp32 "));
  CHECK_THAT(ok.out, Contains("passed (max rel"));
  CHECK_THAT(ok.err, !Contains("warm-up"));
  const bool nothing_written = !fs::exists(tmp.path() / "runs") || fs::is_empty(tmp.path() / "runs");
  CHECK(nothing_written);

  const auto failed = run_kibench("run " + quoted(small) + " --plugin " +
                                  quoted(fs::path(KIBENCH_TEST_PLUGIN_DIR) / "libkibench_test_plugin_lanes.so") +
                                  " --impl cpu-reference,nan-outputs --check-only --out " + quoted(tmp.path() / "f"));
  CHECK(failed.exit_code == 1);
  CHECK_THAT(failed.out, Contains("loss has 1 NaN/Inf of 1 elements"));
}

TEST_CASE("run --filter: only the WORKLOAD/IMPLEMENTATION pairs the expression matches", "[cli]") {
  TempDir tmp;
  const fs::path small = source_dir() / "workloads/small";
  const std::string workloads =
      quoted(small / "small-v1000-h64-t32.json") + " " + quoted(small / "small-v1000-h64-t32-tau2.json");
  const std::string plugin = " --plugin " + quoted(KIBENCH_EXAMPLE_PLUGIN) + " --impl cpu-reference,example-cpu-fp32";
  const auto run = run_kibench("run " + workloads + plugin + " --filter 'tau2.*/example' --min-samples 3 " +
                               "--max-samples 3 --min-time 0 --warmup 0 --out " + quoted(tmp.path() / "runs"));
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(tmp.path() / "runs")) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 1); // the default workload matched nothing and was left out
  CHECK(dirs.front().filename().string().find("tau2") != std::string::npos);
  CHECK(fs::exists(dirs.front() / "run.example-cpu-fp32.json"));
  CHECK_FALSE(fs::exists(dirs.front() / "run.cpu-reference.json"));

  const auto none = run_kibench("run " + workloads + plugin + " --filter nothing-matches --out " +
                                quoted(tmp.path() / "none"));
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Contains("--filter: \"nothing-matches\" matches no WORKLOAD/IMPLEMENTATION pair"));
  CHECK_FALSE(fs::exists(tmp.path() / "none"));
  const auto bad = run_kibench("run " + workloads + plugin + " --filter '(' --out " + quoted(tmp.path() / "bad"));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("is not a regular expression"));
}

TEST_CASE("compare: a run timed beside other lanes than the baseline carries a caveat", "[cli][compare]") {
  TempDir tmp;
  const fs::path small = source_dir() / "workloads/small/small-v1000-h64-t32.json";
  const std::string quick = " --min-samples 5 --max-samples 5 --min-time 0 --warmup 1 --out ";
  const auto alone = run_kibench("run " + quoted(small) + " --impl cpu-reference" + quick + quoted(tmp.path() / "a"));
  const auto beside =
      run_kibench("run " + quoted(small) + " --impl cpu-reference,cpu-fp64" + quick + quoted(tmp.path() / "b"));
  REQUIRE(alone.exit_code == 0);
  REQUIRE(beside.exit_code == 0);
  const auto compared = run_kibench("compare " + quoted(tmp.path() / "a") + " " + quoted(tmp.path() / "b"));
  INFO(compared.out << compared.err);
  REQUIRE(compared.exit_code == 0);
  CHECK_THAT(compared.out, Contains("cpu-reference[2]: caveat: timed beside other lanes than the baseline (this run: "
                                    "cpu-reference, cpu-fp64; the baseline: cpu-reference)"));
  // Two runs of one invocation shared their rounds: no such caveat between them.
  const auto same = run_kibench("compare " + quoted(tmp.path() / "b"));
  INFO(same.out);
  REQUIRE(same.exit_code == 0);
  CHECK_THAT(same.out, !Contains("timed beside other lanes"));
}

TEST_CASE("run --repetitions N: N labelled repetitions, then how each median moved between them", "[cli]") {
  TempDir tmp;
  const fs::path small = source_dir() / "workloads/small/small-v1000-h64-t32.json";
  const auto run = run_kibench("run " + quoted(small) +
                               " --impl cpu-reference,cpu-fp64 --repetitions 3 --min-samples 5 --max-samples 5 "
                               "--min-time 0 --warmup 1 --out " +
                               quoted(tmp.path()));
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(tmp.path())) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 3);
  std::sort(dirs.begin(), dirs.end());
  for (std::size_t k = 0; k < dirs.size(); ++k)
    CHECK_THAT(read_text(dirs[k] / "run.cpu-reference.json"),
               Contains("\"repetition\": \"" + std::to_string(k + 1) + " of 3\""));
  CHECK_THAT(run.out, Contains("repetition 2 of 3"));
  CHECK_THAT(run.out, Contains("run to run (3 repetitions: each one's median, their mean, standard deviation and "
                               "coefficient of variation):"));
  // One row per workload and implementation, three medians each.
  const std::size_t row = run.out.find("distill-jsd-loss-small-default-hidden64-tokens32-vocab1000-bf16  cpu-fp64");
  REQUIRE(row != std::string::npos);
  const std::string line = run.out.substr(row, run.out.find('\n', row) - row);
  const std::string medians = line.substr(line.find('%') + 1);
  CHECK(std::count(medians.begin(), medians.end(), '.') == 3);

  for (const char *bad : {"--repetitions 0", "--repetitions many", "--repetitions 2 --check-only"}) {
    INFO(bad);
    const auto refused = run_kibench("run " + quoted(small) + " --impl cpu-reference " + bad + " --out " +
                                     quoted(tmp.path() / "refused"));
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("--repetitions"));
    CHECK_FALSE(fs::exists(tmp.path() / "refused"));
  }
}

TEST_CASE("run: a lane that failed its check is timed to the minimum only, unless --time-failed", "[cli][plugin]") {
  TempDir tmp;
  const fs::path small = source_dir() / "workloads/small/small-v1000-h64-t32.json";
  const std::string common = "run " + quoted(small) + " --plugin " +
                             quoted(fs::path(KIBENCH_TEST_PLUGIN_DIR) / "libkibench_test_plugin_lanes.so") +
                             " --impl cpu-reference,nan-outputs --min-samples 4 --max-samples 12 --max-noise 0 --min-time 0 "
                             "--warmup 1 --out ";
  const auto samples_of = [](const std::string &table, const std::string &lane) {
    const std::size_t at = table.find("\n" + lane + " ");
    REQUIRE(at != std::string::npos);
    std::istringstream row(table.substr(at + 1, table.find('\n', at + 1) - at - 1));
    std::string name, median, interval, n, stop;
    row >> name >> median >> interval >> n >> stop;
    return std::make_pair(n, stop);
  };
  const auto brief = run_kibench(common + quoted(tmp.path() / "brief"));
  INFO(brief.out << brief.err);
  CHECK(brief.exit_code == 1);
  CHECK(samples_of(brief.out, "nan-outputs") == std::make_pair(std::string("4"), std::string("failed")));
  CHECK(samples_of(brief.out, "cpu-reference").first == "12");
  const auto full = run_kibench(common + quoted(tmp.path() / "full") + " --time-failed");
  INFO(full.out << full.err);
  CHECK(full.exit_code == 1);
  CHECK(samples_of(full.out, "nan-outputs").first == "12");
}
