// Horizontal bar chart: one row per implementation, one bar per series in
// the row (one series for latency and speedup; peak and workspace for
// memory), an optional 95 % interval whisker on each bar, and an optional
// vertical reference line (1× for a speedup, the floor for a ratio).
// Values arrive in display units; the chart only lays them out.
//
// In the SVG: every bar is <rect class="bar"> with data-row and
// data-series; a whisker is <g class="whisker">; the reference line is
// <line class="reference">.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kibench::report {

struct BarValue {
  double value = 0.0;
  std::optional<double> low, high; // the interval drawn as a whisker
  std::string text;                // printed beyond the bar's end
  std::string tooltip;
};

struct BarRow {
  std::string label;
  std::string color;                           // the bar colour when the series has none
  bool flagged = false;                        // failed its correctness check: drawn faded, outlined in red
  std::vector<std::optional<BarValue>> values; // one per series; nullopt draws nothing
};

struct BarSeries {
  std::string name;  // shown in a legend when there are several series
  std::string color; // empty: each row's colour
};

struct ReferenceLine {
  double value = 1.0;
  std::string label;
};

struct BarChartSpec {
  std::string test_id, title, description;
  std::string axis_label; // with its unit: "median latency (ms)"
  std::vector<BarSeries> series;
  std::vector<BarRow> rows;
  std::optional<ReferenceLine> reference;
};

// Every chart's width: two side by side fill a section of the page's
// 1240 px column, so a cohort's latency and speedup (or a sweep's time and
// throughput) are read together.
inline constexpr int kChartWidth = 540;

std::string render_bar_chart(const BarChartSpec &spec);

} // namespace kibench::report
