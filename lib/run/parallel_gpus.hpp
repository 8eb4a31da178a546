// `kibench run --parallel-gpus`: one worker process per GPU of the host,
// each the same `kibench run` on one GPU (CUDA_VISIBLE_DEVICES) and one
// shard of the run. Within a shard K/N that a scheduler gave the host, GPU
// g of G takes shard K + N·g of N·G, so that hosts × GPUs are one sharded
// run that `kibench merge` joins. Each worker records its own clock, power
// and ExecutionEnvironment, as any run does; its output goes to a log file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/run/shard.hpp"

namespace kibench {

struct GpuWorker {
  std::size_t gpu = 0;     // its place among the host's visible GPUs
  std::string device;      // what CUDA_VISIBLE_DEVICES is set to for it
  Shard shard;             // the shard it runs
  std::filesystem::path log;
  int exit_code = 0;       // after run_gpu_workers
};

// The workers for `gpus` GPUs within `host` (nullopt: the whole run),
// the visible devices read from CUDA_VISIBLE_DEVICES where it lists them.
std::vector<GpuWorker> plan_gpu_workers(std::size_t gpus, const std::optional<Shard> &host,
                                        const std::optional<std::string> &visible_devices,
                                        const std::filesystem::path &log_folder);

// Starts `command` + {"--shard", K/N} for every worker at once, with its
// CUDA_VISIBLE_DEVICES and its output in its log, and waits for all.
// Returns the run's exit code: the worst of theirs (2 and 3 over 1 over 0;
// a worker killed by a signal counts as 3).
int run_gpu_workers(const std::vector<std::string> &command, std::vector<GpuWorker> &workers);

} // namespace kibench
