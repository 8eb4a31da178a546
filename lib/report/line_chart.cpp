#include "lib/report/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lib/compare/text_table.hpp"
#include "lib/report/axis_scale.hpp"
#include "lib/report/bar_chart.hpp"
#include "lib/report/palette.hpp"
#include "lib/report/svg_canvas.hpp"
#include "lib/report/units.hpp"

namespace kibench::report {
namespace {

constexpr double kPlotHeight = 300.0;
constexpr double kLeft = 64.0;
constexpr double kRight = 20.0;
constexpr double kTop = 10.0;
constexpr double kBottom = 54.0;
constexpr double kLegendRow = 20.0;
constexpr double kCharWidth = 7.0;
constexpr std::size_t kLongestName = 44; // a legend row has the chart's width

// Legend entries laid out in rows above the plot, wrapping at the width.
struct LegendEntry {
  double x = 0.0, y = 0.0;
  std::string label;
};

std::vector<LegendEntry> legend_layout(const LineChartSpec &spec) {
  std::vector<LegendEntry> out;
  double x = kLeft;
  double y = kTop + 8.0;
  for (const LineSeries &series : spec.series) {
    std::string label = fit_label(series.name, kLongestName);
    const double width = 34.0 + static_cast<double>(compare::TextTable::display_width(label)) * kCharWidth;
    if (x > kLeft && x + width > kChartWidth - kRight) {
      x = kLeft;
      y += kLegendRow;
    }
    out.push_back(LegendEntry{x, y, std::move(label)});
    x += width + 10.0;
  }
  return out;
}

struct Extent {
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0.0;
  double y_min = std::numeric_limits<double>::infinity(), y_max = 0.0;
};

Extent extent_of(const LineChartSpec &spec) {
  Extent e;
  for (const LineSeries &series : spec.series) {
    for (const LinePoint &p : series.points) {
      e.x_min = std::min(e.x_min, p.x);
      e.x_max = std::max(e.x_max, p.x);
      e.y_min = std::min({e.y_min, p.y, p.low.value_or(p.y)});
      e.y_max = std::max({e.y_max, p.y, p.high.value_or(p.y)});
    }
  }
  return e;
}

// The swept values as ticks, thinned when they would crowd the axis.
std::vector<double> x_ticks(const LineChartSpec &spec, const AxisScale &x) {
  std::set<double> values;
  for (const LineSeries &series : spec.series)
    for (const LinePoint &p : series.points) values.insert(p.x);
  std::vector<double> ticks;
  double last_px = -1e9;
  for (const double value : values) {
    const double px = x.position(value);
    if (px - last_px < 34.0) continue;
    ticks.push_back(value);
    last_px = px;
  }
  return ticks;
}

} // namespace

std::string render_line_chart(const LineChartSpec &spec) {
  const std::vector<LegendEntry> legend = legend_layout(spec);
  const double plot_top = (legend.empty() ? kTop : legend.back().y + kLegendRow) + 4.0;
  const double axis_y = plot_top + kPlotHeight;
  const int height = static_cast<int>(std::ceil(axis_y + kBottom));
  SvgCanvas svg(kChartWidth, height, spec.test_id, spec.title, spec.description);
  const double plot_right = kChartWidth - kRight;
  const Extent e = extent_of(spec);
  const bool empty = !(e.x_min <= e.x_max);
  const AxisScale x = AxisScale::logarithmic(empty ? 1.0 : e.x_min, empty ? 1.0 : e.x_max, kLeft, plot_right);
  const bool log_y = !empty && e.y_min > 0.0 && e.y_max / e.y_min > spec.log_y_above_ratio;
  const AxisScale y = log_y ? AxisScale::logarithmic(e.y_min, e.y_max, axis_y, plot_top, 1.15)
                            : AxisScale::linear_from_zero(e.y_max * 1.05, axis_y, plot_top);

  for (const double tick : y.ticks(6)) {
    const double py = y.position(tick);
    svg.line(kLeft, py, plot_right, py, {{"stroke", std::string(kGridColor)}, {"class", "grid"}});
    svg.text(kLeft - 6, py + 4, format_tick(tick), {{"text-anchor", "end"}, {"class", "tick"}});
  }
  for (const double tick : x_ticks(spec, x)) {
    const double px = x.position(tick);
    svg.line(px, plot_top, px, axis_y, {{"stroke", std::string(kGridColor)}, {"class", "grid"}});
    svg.text(px, axis_y + 16, format_tick(tick), {{"text-anchor", "middle"}, {"class", "tick"}});
  }
  svg.line(kLeft, axis_y, plot_right, axis_y, {{"stroke", std::string(kAxisColor)}, {"class", "axis"}});
  svg.line(kLeft, plot_top, kLeft, axis_y, {{"stroke", std::string(kAxisColor)}, {"class", "axis"}});
  svg.text((kLeft + plot_right) / 2.0, axis_y + 40, spec.x_label + " (log scale)",
           {{"text-anchor", "middle"}, {"class", "axis-label"}});
  const double y_mid = (plot_top + axis_y) / 2.0;
  svg.text(16, y_mid, log_y ? spec.y_label + " (log scale)" : spec.y_label,
           {{"text-anchor", "middle"},
            {"class", "axis-label"},
            {"transform", "rotate(-90 16 " + svg_number(y_mid) + ")"}});

  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    const LineSeries &series = spec.series[s];
    svg.open_group({{"class", "series"}, {"data-series", series.name}});
    std::vector<SvgPoint> path;
    for (const LinePoint &p : series.points) path.push_back({x.position(p.x), y.position(p.y)});
    if (path.size() > 1)
      svg.polyline(path, {{"stroke", series.color}, {"stroke-width", "2"}, {"class", "series-line"}});
    for (std::size_t k = 0; k < series.points.size(); ++k) {
      const LinePoint &p = series.points[k];
      if (p.low && p.high) {
        svg.open_group({{"class", "whisker"}, {"stroke", series.color}, {"stroke-width", "1.5"}});
        const double lo = y.position(*p.low), hi = y.position(*p.high);
        svg.line(path[k].x, lo, path[k].x, hi, {});
        svg.line(path[k].x - 4, lo, path[k].x + 4, lo, {});
        svg.line(path[k].x - 4, hi, path[k].x + 4, hi, {});
        svg.close_group();
      }
      SvgAttributes point{{"class", p.flagged ? "point flagged" : "point"},
                          {"data-series", series.name},
                          {"data-x", format_tick(p.x)}};
      if (p.flagged) {
        point.insert(point.end(),
                     {{"fill", "#ffffff"}, {"stroke", std::string(kFailedColor)}, {"stroke-width", "2"}});
      } else {
        point.insert(point.end(), {{"fill", series.color}, {"stroke", "#ffffff"}, {"stroke-width", "1"}});
      }
      svg.open_group({{"class", "point-group"}}, p.tooltip);
      svg.circle(path[k].x, path[k].y, 4.5, point);
      svg.close_group();
    }
    svg.close_group();

    const LegendEntry &entry = legend[s];
    svg.line(entry.x, entry.y, entry.x + 22, entry.y,
             {{"stroke", series.color}, {"stroke-width", "2.5"}, {"class", "legend-line"}});
    svg.text(entry.x + 28, entry.y + 4, entry.label, {{"class", "legend"}},
             entry.label == series.name ? "" : series.name);
  }
  return svg.finish();
}

} // namespace kibench::report
