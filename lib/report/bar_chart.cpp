#include "lib/report/bar_chart.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lib/compare/text_table.hpp"
#include "lib/report/axis_scale.hpp"
#include "lib/report/palette.hpp"
#include "lib/report/svg_canvas.hpp"
#include "lib/report/units.hpp"

namespace kibench::report {
namespace {

constexpr double kBarThickness = 18.0;
constexpr double kBarGap = 3.0;  // between the bars of one row
constexpr double kRowGap = 12.0; // between rows
constexpr double kTop = 14.0;
constexpr double kLegendHeight = 22.0;
constexpr double kBottom = 50.0;   // tick labels and the axis label
constexpr double kRight = 118.0;   // room for the value printed after the longest bar
constexpr double kCharWidth = 7.6; // a digit of the 12 px label font (the widest common glyphs)
constexpr std::size_t kLongestLabel = 26;

double largest_value(const BarChartSpec &spec) {
  double largest = spec.reference ? spec.reference->value : 0.0;
  for (const BarRow &row : spec.rows) {
    for (const auto &value : row.values) {
      if (!value) continue;
      largest = std::max({largest, value->value, value->high.value_or(0.0)});
    }
  }
  return largest;
}

} // namespace

std::string render_bar_chart(const BarChartSpec &spec) {
  if (spec.series.empty()) throw std::logic_error("render_bar_chart: a chart needs at least one series");
  const bool legend = spec.series.size() > 1;
  std::size_t label_chars = 0;
  for (const BarRow &row : spec.rows)
    label_chars =
        std::max(label_chars, compare::TextTable::display_width(fit_label(row.label, kLongestLabel)));
  const double left = std::clamp(static_cast<double>(label_chars) * kCharWidth + 16.0, 90.0, 200.0);
  const double row_height = static_cast<double>(spec.series.size()) * (kBarThickness + kBarGap) - kBarGap;
  const double plot_top = kTop + (legend ? kLegendHeight : 0.0);
  const double plot_height = static_cast<double>(spec.rows.size()) * (row_height + kRowGap) + kRowGap;
  const int height = static_cast<int>(std::ceil(plot_top + plot_height + kBottom));
  const double plot_right = kChartWidth - kRight;

  SvgCanvas svg(kChartWidth, height, spec.test_id, spec.title, spec.description);
  const AxisScale x = AxisScale::linear_from_zero(largest_value(spec), left, plot_right);
  const double axis_y = plot_top + plot_height;

  if (legend) {
    double legend_x = left;
    for (const BarSeries &series : spec.series) {
      svg.rect(legend_x, kTop, 12, 12, {{"fill", series.color}, {"class", "legend-swatch"}});
      svg.text(legend_x + 17, kTop + 10.5, series.name, {{"class", "legend"}});
      legend_x += 30.0 + static_cast<double>(compare::TextTable::display_width(series.name)) * kCharWidth;
    }
  }

  for (const double tick : x.ticks()) {
    const double px = x.position(tick);
    svg.line(px, plot_top, px, axis_y, {{"stroke", std::string(kGridColor)}, {"class", "grid"}});
    svg.text(px, axis_y + 16, format_tick(tick), {{"text-anchor", "middle"}, {"class", "tick"}});
  }
  svg.line(left, axis_y, plot_right, axis_y, {{"stroke", std::string(kAxisColor)}, {"class", "axis"}});
  svg.line(left, plot_top, left, axis_y, {{"stroke", std::string(kAxisColor)}, {"class", "axis"}});
  svg.text((left + plot_right) / 2.0, axis_y + 38, spec.axis_label,
           {{"text-anchor", "middle"}, {"class", "axis-label"}});

  for (std::size_t r = 0; r < spec.rows.size(); ++r) {
    const BarRow &row = spec.rows[r];
    const double row_top = plot_top + kRowGap + static_cast<double>(r) * (row_height + kRowGap);
    const std::string label = fit_label(row.label, kLongestLabel);
    svg.text(left - 8, row_top + row_height / 2.0 + 4, label,
             {{"text-anchor", "end"}, {"class", row.flagged ? "row-label flagged" : "row-label"}},
             label == row.label ? std::string_view{} : std::string_view{row.label});
    for (std::size_t s = 0; s < spec.series.size() && s < row.values.size(); ++s) {
      const auto &value = row.values[s];
      if (!value) continue;
      const double top = row_top + static_cast<double>(s) * (kBarThickness + kBarGap);
      const double mid = top + kBarThickness / 2.0;
      const std::string color = spec.series[s].color.empty() ? row.color : spec.series[s].color;
      const double end = x.position(value->value);
      SvgAttributes bar{{"fill", color},
                        {"class", row.flagged ? "bar flagged" : "bar"},
                        {"data-row", row.label},
                        {"data-series", spec.series[s].name}};
      if (row.flagged) {
        bar.emplace_back("fill-opacity", "0.45");
        bar.emplace_back("stroke", std::string(kFailedColor));
        bar.emplace_back("stroke-width", "1.5");
      }
      svg.open_group({{"class", "bar-group"}}, value->tooltip);
      svg.rect(left, top, end - left, kBarThickness, bar);
      double text_x = end;
      if (value->low && value->high) {
        const double lo = x.position(*value->low);
        const double hi = x.position(*value->high);
        svg.open_group({{"class", "whisker"}, {"stroke", std::string(kAxisColor)}, {"stroke-width", "1.5"}});
        svg.line(lo, mid, hi, mid, {});
        svg.line(lo, mid - 5, lo, mid + 5, {});
        svg.line(hi, mid - 5, hi, mid + 5, {});
        svg.close_group();
        text_x = std::max(text_x, hi);
      }
      svg.text(text_x + 6, mid + 4, value->text, {{"class", "value"}});
      svg.close_group();
    }
  }

  if (spec.reference) {
    const double px = x.position(spec.reference->value);
    svg.line(px, plot_top - 4, px, axis_y,
             {{"stroke", std::string(kReferenceColor)}, {"stroke-dasharray", "4 3"}, {"class", "reference"}});
    svg.text(px + 4, plot_top + 6, spec.reference->label, {{"class", "reference-label"}});
  }
  return svg.finish();
}

} // namespace kibench::report
