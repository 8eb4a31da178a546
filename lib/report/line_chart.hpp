// Line chart of a sweep: one line per implementation over a logarithmic
// x axis (the swept axis, T, V or H, which sweeps grow geometrically), with the
// 95 % interval of each point drawn as a vertical whisker. The x ticks are
// the swept values themselves, so every value measured is labelled.
//
// In the SVG: each point is <circle class="point"> with data-series and
// data-x; each line is <polyline class="series-line">; whiskers are
// <g class="whisker">; the legend lists every series.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kibench::report {

struct LinePoint {
  double x = 0.0, y = 0.0;
  std::optional<double> low, high;
  bool flagged = false; // failed its correctness check: drawn hollow, outlined in red
  std::string tooltip;
};

struct LineSeries {
  std::string name;
  std::string color;
  std::vector<LinePoint> points; // in increasing x
};

struct LineChartSpec {
  std::string test_id, title, description;
  std::string x_label, y_label; // with units
  // A logarithmic y axis when the values span more than this factor
  // (latencies over a wide sweep); linear from zero otherwise.
  double log_y_above_ratio = 20.0;
  std::vector<LineSeries> series;
};

std::string render_line_chart(const LineChartSpec &spec);

} // namespace kibench::report
