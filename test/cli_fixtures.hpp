// What the reliability CLI tests share: the small CPU workload, sampling
// quick enough for a test, one `kibench run` into a folder, and a run with
// a time limit for inputs that used to hang.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace kibench::test {

inline const std::filesystem::path kSourceDir = kibench::test::source_dir();
inline const std::filesystem::path kSmallWorkload = kSourceDir / "workloads/small/small-v1000-h64-t32.json";
inline const std::string kQuickSampling = "--min-samples 3 --max-samples 3 --min-time 0 --warmup 0";

// The directories of `folder` (none when it does not exist), sorted.
inline std::vector<std::filesystem::path> directories_in(const std::filesystem::path &folder) {
  std::vector<std::filesystem::path> out;
  if (!std::filesystem::exists(folder)) return out;
  for (const auto &entry : std::filesystem::directory_iterator(folder))
    if (entry.is_directory()) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// `kibench run` of `workload` with cpu-reference into `out` and `flags`,
// quick sampling for every sampling flag `flags` does not set; its run
// directory.
inline std::filesystem::path quick_run_with(const std::filesystem::path &out, const std::string &flags,
                                            const std::filesystem::path &workload = kSmallWorkload) {
  std::string arguments = flags;
  for (const char *quick : {"--min-samples 3", "--max-samples 3", "--min-time 0", "--warmup 0"}) {
    const std::string flag = std::string(quick).substr(0, std::string(quick).find(' '));
    if (flags.find(flag + " ") == std::string::npos && flags.find(flag + "=") == std::string::npos)
      arguments += std::string(" ") + quick;
  }
  const auto before = directories_in(out);
  const auto run =
      run_kibench("run " + quoted(workload) + " --impl cpu-reference --out " + quoted(out) + " " + arguments);
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  for (const auto &dir : directories_in(out))
    if (std::find(before.begin(), before.end(), dir) == before.end()) return dir;
  FAIL("no new run directory in " << out);
  return {};
}

inline std::filesystem::path quick_run(const std::filesystem::path &out,
                                       const std::filesystem::path &workload = kSmallWorkload) {
  return quick_run_with(out, "", workload);
}

// kibench with a time limit: a command that hangs exits 124 (timeout(1))
// instead of stopping the suite.
inline ProcessResult run_kibench_within(int seconds, const std::string &arguments) {
  return run_command("timeout -k 2 " + std::to_string(seconds) + " '" + std::string(KIBENCH_BINARY) + "' " +
                     arguments);
}

} // namespace kibench::test
