// Everything `kibench report` shows, as data: the builder
// (report_builder.hpp) fills it from the runs and compare's cohorts; the
// page writer (html_page.hpp) and chart builders only format it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/manifest/run_status.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::report {

// One output's error against the oracle (spec.measurements rel_l2_error_*).
struct OutputError {
  std::string output; // "loss", "grad_student_input", ...
  double relative_l2 = 0.0;
  bool above_tolerance = false; // above its bound: maxRelativeError, or the loss's own
};

// One run as its cohort's table and charts show it. Latencies in ns.
struct RunFigures {
  std::string id;                       // the implementation; compare's numbered run id where it repeats
  std::string implementation;           // for colours: one per implementation name
  RunStatus status = RunStatus::passed; // BenchmarkRun spec.status
  std::string label;                    // where it was read
  std::string observed_at;
  bool is_baseline = false;
  bool is_floor = false; // the cublas-floor pseudo-implementation

  std::optional<double> median_ns;
  std::optional<stats::Interval> median_interval; // 95 % interval of the median
  std::string interval_source;                    // how the interval was obtained, in words
  std::size_t samples = 0;                        // raw samples; 0 when the run has none
  std::optional<double> p20_ns, p80_ns;

  // Against the cohort's baseline: compare's bootstrap interval of the
  // speedup (baseline median / this median) and its verdict.
  std::optional<stats::Interval> speedup;
  std::string verdict;        // "faster", "slower", "shared"
  std::string verdict_detail; // compare's explanation, with the pairing
  std::optional<std::size_t> rank;
  std::string not_ranked_reason; // reason codes when compare could not rank it

  std::optional<double> ratio_to_floor; // this median / the floor's median

  std::optional<double> tflops; // effective throughput the run reports
  std::optional<double> peak_bytes, workspace_bytes;

  std::vector<OutputError> errors;
  std::optional<double> max_relative_error, max_absolute_error; // spec.correctness
};

// Runs that share one comparison key: the same operation, workload,
// protocol, environment, correctness policy and metric.
struct CohortSection {
  std::string slug; // unique on the page; names its charts
  std::string workload_name, workload_title;
  std::vector<std::pair<std::string, std::int64_t>> axes; // "tokens" -> 32
  std::string protocol_name, protocol_title;
  std::string environment_digest, environment_name;
  std::string comparison_key;
  std::string comparator;                                        // the workload's policy
  std::optional<double> tolerance_relative, tolerance_absolute; // and its tolerances
  std::string baseline_id;                                      // empty when none is rankable
  std::vector<RunFigures> runs;                                 // baseline first, floor last
  std::vector<std::string> notes;
};

struct SweepPoint {
  std::int64_t value = 0; // of the swept axis
  double median_ns = 0.0;
  std::optional<stats::Interval> median_interval;
  std::optional<double> tflops;
  RunStatus status = RunStatus::passed;
  std::string run_id;
};

struct SweepSeries {
  std::string implementation;
  std::vector<SweepPoint> points; // increasing values, one per value
};

// Runs of one operation, protocol and environment whose workloads differ
// only in one axis (and what follows from it: shapes, seeds, the weights'
// ±1/sqrt(fan_in) bounds, a generator range equal to the axis).
struct Sweep {
  std::string slug;
  std::string operation_name;
  std::string axis;       // the swept axis: "tokens", "vocab", "hidden", ...
  std::string fixed_axes; // the others: "vocab 1000, hidden 64"
  std::string protocol_title, environment_name;
  std::vector<std::int64_t> values; // every value of the axis measured, increasing
  std::vector<SweepSeries> series;
  std::vector<std::string> notes; // duplicates left out, series without throughput
};

struct EnvironmentSection {
  std::string digest, name, title;
  std::vector<std::pair<std::string, std::string>> facts; // "hardware.product" -> "NVIDIA H200"
};

struct ReportModel {
  std::string title;
  std::string generator; // "kibench 0.1.0"
  std::vector<std::string> inputs;
  std::string anchor_choice; // how the baseline was chosen, in words
  stats::BootstrapSettings bootstrap;
  std::size_t run_count = 0;
  std::vector<CohortSection> cohorts;
  std::vector<Sweep> sweeps;
  std::vector<EnvironmentSection> environments;
};

} // namespace kibench::report
