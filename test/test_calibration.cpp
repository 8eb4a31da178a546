// Calibration sentinels (lib/calibration/): the judgement against a
// machine's history, and `kibench run` with a history its board cannot
// match (as a co-running load would make it), on the CPU.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lib/calibration/history.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench::calibration;
using namespace kibench::test;

namespace {

SentinelSet readings(double launch_us, double copy_gbps, double compute) {
  return {"test board",
          {{"launch", "us", launch_us, false}, {"copy", "GB/s", copy_gbps, true}, {"compute", "TFLOP/s", compute, true}}};
}

std::vector<SentinelSet> steady_history(std::size_t n) {
  std::vector<SentinelSet> h;
  for (std::size_t i = 0; i < n; ++i)
    h.push_back(readings(5.0 + 0.05 * static_cast<double>(i % 3), 3000.0 + 10.0 * static_cast<double>(i % 4),
                         600.0 - 2.0 * static_cast<double>(i % 5)));
  return h;
}

} // namespace

TEST_CASE("calibration: readings like the history's are within the control limits", "[calibration]") {
  const auto h = steady_history(12);
  const Judgement j = judge(h, readings(5.05, 3010.0, 598.0), readings(5.02, 3005.0, 600.0));
  CHECK(j.caveats.empty());
  CHECK(j.basis == "control limits from the last 12 clean runs on this machine");
}

TEST_CASE("calibration: a loaded board is outside the limits, on the side that names it", "[calibration]") {
  const auto h = steady_history(12);
  // A co-running job: copies at 60 %, launches 3× slower.
  const Judgement j = judge(h, readings(15.0, 1800.0, 598.0), readings(15.2, 1810.0, 600.0));
  REQUIRE(j.caveats.size() == 4);
  CHECK_THAT(j.caveats[0], Catch::StartsWith("launch at the start 15 us, worse than the control limits"));
  CHECK_THAT(j.caveats[1], Catch::StartsWith("copy at the start 1.8e+03 GB/s, worse than the control limits"));
}

TEST_CASE("calibration: a board faster than its history is noted, not a caveat", "[calibration]") {
  const auto h = steady_history(12);
  const Judgement j = judge(h, readings(2.0, 3010.0, 598.0), readings(2.0, 3005.0, 600.0));
  CHECK(j.caveats.empty());
  CHECK(j.basis == "control limits from the last 12 clean runs on this machine (2 readings better than them)");
}

TEST_CASE("calibration: a reading that moves more than 10 % during the workload is a caveat", "[calibration]") {
  const Judgement j = judge({}, readings(5.0, 3000.0, 600.0), readings(5.0, 3000.0, 450.0));
  REQUIRE(j.caveats.size() == 1);
  CHECK(j.caveats[0] == "compute moved -25 % between the start and the end (600 → 450 TFLOP/s)");
  CHECK(j.basis == "no control limits yet: 0 earlier clean runs on this machine (they start at 5)");
}

TEST_CASE("calibration: the launch latency has a 25 % floor, and drift follows a wide history",
          "[calibration]") {
  // As on an H100 between quiet runs: 8.87 → 10.1 us is +14 %, no caveat.
  CHECK(judge({}, readings(8.87, 3000.0, 600.0), readings(10.1, 3000.0, 600.0)).caveats.empty());
  // A co-running job's launches are hundreds of times slower.
  const Judgement loaded = judge({}, readings(9.0, 3000.0, 600.0), readings(2460.0, 3000.0, 600.0));
  REQUIRE(loaded.caveats.size() == 1);
  CHECK_THAT(loaded.caveats[0], Catch::StartsWith("launch moved +27233 % between the start and the end"));
  // A history whose copy readings spread ±15 %: a 12 % move inside a
  // workload is within that machine's own scatter.
  std::vector<SentinelSet> wide;
  for (int i = 0; i < 10; ++i) wide.push_back(readings(5.0, i % 2 == 0 ? 2600.0 : 3400.0, 600.0));
  CHECK(judge(wide, readings(5.0, 3000.0, 600.0), readings(5.0, 2640.0, 600.0)).caveats.empty());
  CHECK(relative_floor("launch") == kLaunchFloor);
  CHECK(relative_floor("copy") == kDriftLimit);
}

TEST_CASE("calibration: the history keeps its window and skips lines that are not entries", "[calibration]") {
  TempDir tmp;
  const fs::path file = history_file(tmp.path(), "test board");
  for (std::size_t i = 0; i < kHistoryWindow + 5; ++i) append_history(file, readings(5.0, 3000.0 + static_cast<double>(i), 600.0));
  {
    std::ofstream torn(file, std::ios::app);
    torn << "{\"device\": \"test board\", \"readings\": [\n";
  }
  append_history(file, readings(5.0, 1.0, 600.0));
  const auto h = read_history(file, "test board");
  REQUIRE(h.size() == kHistoryWindow);
  CHECK(h.back().readings[1].value == 1.0);
  CHECK(h.front().readings[1].value == 3000.0 + 6);
  CHECK(read_history(file, "another board").empty());
}

TEST_CASE("kibench run: sentinels outside this machine's limits mark the runs, compare shows it, "
          "--strict-calibration exits 1",
          "[calibration][cli]") {
  TempDir tmp;
  const fs::path history = tmp.path() / "history";
  // A history of a host far faster than any: every reading here is worse.
  for (int i = 0; i < 6; ++i) {
    SentinelSet fast{"host CPU",
                     {{"launch", "us", 1e-6, false}, {"copy", "GB/s", 1e6, true}, {"compute", "GFLOP/s", 1e6, true}}};
    append_history(history_file(history, "host CPU"), fast);
  }
  const fs::path workload = source_dir() / "workloads/small/small-v1000-h64-t32.json";
  const std::string env = "KIBENCH_CALIBRATION_DIR=" + quoted(history) + " ";
  const std::string run = "run " + quoted(workload) +
                          " --impl cpu-reference --min-samples 5 --max-samples 5 --min-time 0 --warmup 1 --out ";
  const auto strict = run_command(env + "'" KIBENCH_BINARY "' " + run + quoted(tmp.path() / "strict") +
                                  " --strict-calibration");
  INFO(strict.out << strict.err);
  CHECK(strict.exit_code == 1);
  CHECK(strict.err.find("--strict-calibration: 1 of 1 workloads ran with the calibration sentinels outside") !=
        std::string::npos);
  CHECK(strict.err.find("calibration: launch at the start") != std::string::npos);
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(tmp.path() / "strict")) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 1);
  const std::string manifest = read_text(dirs.front() / "run.cpu-reference.json");
  CHECK(manifest.find("\"calibration_caveat\": \"launch at the start") != std::string::npos);
  CHECK(manifest.find("\"calibration_device\": \"host CPU\"") != std::string::npos);
  // A marked run is not kept in the history.
  CHECK(read_history(history_file(history, "host CPU"), "host CPU").size() == 6);
  // compare carries the caveat to whoever reads the ranking.
  const auto compare = run_kibench("compare " + quoted(dirs.front()) + " --format json");
  INFO(compare.out << compare.err);
  CHECK(compare.out.find("calibration: launch at the start") != std::string::npos);
  // Without --strict-calibration the same run passes.
  const auto lenient = run_command(env + "'" KIBENCH_BINARY "' " + run + quoted(tmp.path() / "lenient"));
  CHECK(lenient.exit_code == 0);
}
