// `kibench run` as a library call: load and validate every workload first
// (bad input writes nothing), check each implementation against the fp64
// oracle, time them interleaved, and write one run directory per workload:
//
//   <out>/<timestamp>-<workload>-<pass>/
//     operation.json  workload.json  protocol.json  environment.json
//     implementation.<impl>.json  run.<impl>.json  samples.<impl>.json
//     summary.json   (the printed table as data; not a manifest)
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/correctness/correctness.hpp"
#include "lib/harness/harness.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/json/value.hpp"
#include "lib/run/backend.hpp"
#include "lib/run/outcome.hpp"
#include "lib/run/outcome_summary.hpp"
#include "lib/run/shard.hpp"
#include "lib/stats/summary.hpp"
#include "lib/workload/axis_sweep.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

struct SessionOptions {
  std::vector<std::filesystem::path> workload_files; // empty: the default workload
  // --axis: each workload is run at every combination of these values
  // instead (workload/axis_sweep.hpp); empty: as written.
  std::vector<AxisValues> axes;
  std::vector<std::string> implementations; // empty: the defaults for this machine
  std::filesystem::path out_dir = "runs";
  ProtocolSettings settings;
  // --save-tensors: inputs and outputs as .npy under this folder (one
  // subfolder per workload, named like its run directory).
  std::optional<std::filesystem::path> save_tensors;
  // --lock-clocks: the SM clock locked for the whole session where NVML
  // allows it (and reset at its end, or on SIGINT / SIGTERM).
  std::optional<ClockTarget> lock_clocks;
  // --label: names this invocation's runs (metadata.labels.run_label of
  // every BenchmarkRun), which compare and report show in place of a
  // number where an implementation appears more than once. Empty: none.
  std::string label;
  // More labels for every BenchmarkRun of the session (metadata.labels;
  // `kibench reproduce` names the run it reproduces there). Keys
  // [a-z][a-z0-9_]*, values at most 200 characters, as KernelIndex allows.
  json::Object extra_labels;
  std::function<void(const std::string &)> note; // one-line notices ("GPU implementations skipped: ...")
  // Every phase of every workload (progress.hpp), with its workload filled.
  ProgressCallback progress;
  // Each workload's outcome as soon as its run directory is written (the
  // outcomes are returned as well).
  std::function<void(const WorkloadOutcome &)> workload_done;
  // --check-only: the oracle and each implementation's check (one
  // invocation, on poisoned outputs), nothing timed and nothing written;
  // the outcomes carry the verdicts (run_dir empty).
  bool check_only = false;
  // --time-failed: a lane that failed its check is sampled like the others
  // (by default only to the protocol's minimum: its time is no result's).
  bool time_failed = false;
  // --filter: only the pairs whose "<workload name>/<implementation>"
  // this ECMAScript regular expression finds a match in (the oracle
  // always runs); nullopt: every pair.
  std::optional<std::string> filter;
  // --shard K/N, or the scheduler's index and count (run/shard.hpp): only
  // the points this shard takes are run, each run labelled with the shard
  // and the run set, and the run set written beside the run directories.
  std::optional<Shard> shard;
};

// The workload `kibench run` uses when none is named.
std::filesystem::path default_workload(const Backend &backend);
// The implementations it runs when none is named.
std::vector<std::string> default_implementations(const Backend &backend);

std::vector<WorkloadOutcome> run_session(const Backend &backend, const SessionOptions &options);

} // namespace kibench
