// `kibench merge`: the shards of one sharded run (run/shard.hpp) joined
// into one folder that compare, report, export and digest --verify read as
// the whole run. The shards must be one run: the same run set (the same
// points in the same order, implementations, settings and kibench), else an
// InputError names what differs. Every point must be there exactly once:
// the missing and the doubled are listed (a CheckFailed, exit 1), and
// nothing is written.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::merge {

struct MergedPoint {
  std::size_t index = 0;
  std::string workload;
  std::filesystem::path run_directory;
};

struct MergePlan {
  json::Value run_set;               // the document every shard wrote
  std::string run_set_digest;        // its digest
  std::vector<MergedPoint> points;   // in the run's order, each once
  std::vector<std::string> missing;  // "point 4 of 18 (name)"
  std::vector<std::string> doubled;  // "point 2 of 18 (name): dir, dir"
  std::vector<std::string> shards;   // the shards seen, "0/3 (from --shard)"
  [[nodiscard]] bool complete() const { return missing.empty() && doubled.empty(); }
};

// Reads every run directory under `paths` (a run directory, or a folder of
// them as `kibench run --out` writes, with its run-set file).
MergePlan plan_merge(const std::vector<std::filesystem::path> &paths);

// Copies the points' run directories and the run set into `out`, a folder
// that must not exist yet; staged, so a failure leaves nothing behind.
void write_merge(const MergePlan &plan, const std::filesystem::path &out);

} // namespace kibench::merge
