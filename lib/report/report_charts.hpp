// The charts of a report, from its model: which rows and series each
// chart has, in which unit, with what whiskers and reference line. Each
// returns the finished <svg> with its title and caption, or nothing when
// the data has nothing to draw (a speedup chart without a candidate, a
// ratio without a floor).
//
// data-testid of each chart, <slug> being the cohort's or sweep's slug:
//   chart-median-<slug>    median latency per implementation, 95 % whiskers
//   chart-speedup-<slug>   speedup over the baseline, bootstrap whiskers
//   chart-floor-<slug>     median ÷ cublas-floor median
//   chart-memory-<slug>    peak and workspace memory
//   chart-sweep-time-<slug>, chart-sweep-tflops-<slug>   sweeps over T, V, H, ...
//   chart-floor-overview   every cohort's ratios to cublas-floor in one chart
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/report/palette.hpp"
#include "lib/report/report_model.hpp"

namespace kibench::report {

struct Chart {
  std::string svg;
  std::string title;   // also the <svg>'s <title>
  std::string caption; // how to read it; also its <desc>
  std::string id;      // its data-testid
};

// Every implementation name in the order first met (cohorts, then sweeps):
// its colour on every chart of the page.
ColorAssignment assign_colors(const ReportModel &model);

std::optional<Chart> median_chart(const CohortSection &cohort, const ColorAssignment &colors);
std::optional<Chart> speedup_chart(const CohortSection &cohort, const ColorAssignment &colors);
std::optional<Chart> floor_chart(const CohortSection &cohort, const ColorAssignment &colors);
std::optional<Chart> memory_chart(const CohortSection &cohort);
// A sweep's axis as the page names it: "T" for tokens, "V" for vocab, "H"
// for hidden, else the axis's own name; and in words ("vocabulary size V").
std::string axis_symbol(const std::string &axis);
std::string axis_words(const std::string &axis);

std::optional<Chart> sweep_time_chart(const Sweep &sweep, const ColorAssignment &colors);
std::optional<Chart> sweep_tflops_chart(const Sweep &sweep, const ColorAssignment &colors);
// A cohort's charts that have data, in page order (median, speedup, floor,
// memory).
std::vector<Chart> cohort_charts(const CohortSection &cohort, const ColorAssignment &colors);
// One bar per run with a ratio to the floor, across all cohorts, labelled
// by the workload's axes ("H4096 V128256 T8192"; the run's name follows
// the bar's value) and sorted by them,
// the last axis listed first; only where two cohorts or more have one (a
// scaling study), since a single cohort's floor chart says it all.
std::optional<Chart> floor_overview_chart(const std::vector<CohortSection> &cohorts,
                                          const ColorAssignment &colors);

} // namespace kibench::report
