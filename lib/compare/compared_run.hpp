// One BenchmarkRun as compare sees it: its identity, the digests that make
// up its comparison key, what its protocol says about effects and
// interleaving, and its raw samples when it has them (an imported record
// has only the median its source reported).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/harness/harness.hpp"
#include "lib/json/value.hpp"
#include "lib/manifest/run_status.hpp"

namespace kibench::compare {

struct RawSeries {
  std::filesystem::path file; // the raw samples file, digest already verified
  std::string invocation;     // shared by every run of one interleaved `kibench run`
  std::vector<Sample> samples;

  [[nodiscard]] std::vector<double> nanoseconds() const;
};

struct ComparedRun {
  std::string id;             // unique, short: the implementation, with its run label or a number
                              // ("fused[main]", "fused[2]") when repeated
  std::string run_label;      // metadata.labels.run_label (`kibench run --label`); "" when none
  std::string timed_with;     // metadata.labels.timed_with: the lanes of its rounds; "" when not recorded
  std::string implementation; // labels.implementation, else the ImplementationRevision's name
  std::string name;           // metadata.name of the run
  std::string label;          // where it was read: "dir/run.fused.json", "batch.json#2"
  std::filesystem::path file;
  std::string digest;                   // the run's identity digest
  RunStatus status = RunStatus::passed; // spec.status

  // The comparison key and its parts.
  std::string operation_digest, workload_digest, protocol_digest, environment_digest, implementation_digest;
  json::Value correctness; // the WorkloadCase's spec.correctness
  std::string metric;      // "latency:median:ns"
  std::string comparison_key;
  // The comparison key with the environment's drift equivalence key in
  // place of its digest (compare --allow-environment-drift; environment_drift.hpp).
  std::string drift_comparison_key;

  // Names for people; the digests above decide.
  std::string workload_name, environment_name, protocol_name;
  std::string protocol_family; // BenchmarkProtocol spec.comparability.family
  std::string upstream_source; // spec.sourceNative.source of an imported record; "" for our own
  // The BenchmarkProtocol and ExecutionEnvironment manifests themselves, so
  // that a difference can be named field by field.
  json::Value protocol, environment;

  double minimum_effect = 0.01;       // relative; from the protocol's notes, else 1 %
  bool minimum_effect_stated = false; // false: the 1 % default
  bool interleaved = true;            // the protocol interleaves implementations round by round
  bool rotated_order = false;         // ... in an order that changes each round (kibench's Williams design)

  std::optional<double> median_ns; // from the raw samples, else as reported
  std::optional<RawSeries> raw;
  std::string raw_missing; // why there are no raw samples (empty when there are)
  std::vector<std::string> caveats;

  // Rankable: passed its correctness check and has samples to resample.
  [[nodiscard]] bool rankable() const { return status == RunStatus::passed && raw.has_value(); }
};

} // namespace kibench::compare
