// Sharding a run: `kibench run --shard K/N`, or the index and count a job
// scheduler gives each of N copies of one command (Slurm job arrays,
// Kubernetes Indexed Jobs, Bazel-style test sharding). The run's points are
// its workloads in a fixed order: the files as given, each expanded by
// --axis (workload/axis_sweep.hpp), then --filter; shard K of N takes the
// points whose index i has i mod N = K. The run set (run_set_document) names
// the whole list and the settings every shard must share, so that
// `kibench merge` can tell that shards are one run, and which points are
// missing or doubled.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench {

struct Shard {
  std::size_t index = 0; // K, in [0, count)
  std::size_t count = 1; // N
  std::string source;    // "--shard", or the environment variables it came from

  [[nodiscard]] bool takes(std::size_t point) const { return point % count == index; }
  [[nodiscard]] std::string text() const; // "K/N"
};

// "K/N" with 0 <= K < N; anything else is an InputError naming --shard.
Shard parse_shard(std::string_view text);

// Reads a variable of the environment; nullopt where it is unset.
using EnvironmentReader = std::function<std::optional<std::string>(const char *name)>;
EnvironmentReader process_environment();

// The shard the environment gives where --shard is not: from
//   SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN, where set) and
//     SLURM_ARRAY_TASK_COUNT;
//   JOB_COMPLETION_INDEX with `shards` (--shards N, the Job's completions:
//     Kubernetes does not put the count in the environment);
//   TEST_SHARD_INDEX and TEST_TOTAL_SHARDS.
// nullopt when none is set. Two that are set and disagree, an index
// without its count, or a value out of range are InputErrors naming the
// variables.
std::optional<Shard> shard_from_environment(const EnvironmentReader &environment,
                                            std::optional<std::size_t> shards);

// One point of the run: a workload as expanded.
struct RunPoint {
  std::string name;   // metadata.name
  std::string digest; // the WorkloadCase's digest
};

// A run's point as its BenchmarkRuns label it (run_set_point): "I of P".
std::string point_label(std::size_t index, std::size_t count);
// The label read back: {I, P} with I < P, or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> parse_point_label(std::string_view label);

// What every shard of one run shares, as a JSON document: the points in
// order, the implementations asked for, the pass, the settings that enter
// the protocol (family and notes), the filter and kibench's version. Its
// digest (canonical JSON) is the run set's identity.
json::Value run_set_document(const std::vector<RunPoint> &points, const std::vector<std::string> &implementations,
                             const json::Value &settings);

// The file a sharded run writes beside its run directories, named by the
// run set's digest: "run-set.<first 16 hex digits>.json".
std::string run_set_file_name(std::string_view run_set_digest);

} // namespace kibench
