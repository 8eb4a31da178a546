#include "lib/report/report_charts.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "lib/compare/report_text.hpp"
#include "lib/report/bar_chart.hpp"
#include "lib/report/line_chart.hpp"
#include "lib/report/units.hpp"

namespace kibench::report {
namespace {

constexpr std::string_view kPeakColor = "#4d4d4d";
constexpr std::string_view kWorkspaceColor = "#a9a9a9";

std::string row_label(const RunFigures &run) {
  std::string label = run.id;
  if (run.is_baseline) label += " (baseline)";
  // Drawn as a failure: a status that is no evidence of a correct result
  // (is_failure); a run that computes no loss (the floor) is not one.
  if (is_failure(run.status)) label += fmt::format(" — {}", to_string(run.status));
  return label;
}

std::string interval_text(const stats::Interval &interval, double scale, const std::string &unit) {
  return fmt::format("[{}, {}] {}", format_significant(interval.low / scale),
                     format_significant(interval.high / scale), unit);
}

// "H4096 V128256 T8192": each axis's initial and value, the last one first.
std::string axes_label(const CohortSection &cohort) {
  std::string label;
  for (auto it = cohort.axes.rbegin(); it != cohort.axes.rend(); ++it) {
    if (!label.empty()) label += ' ';
    if (!it->first.empty())
      label += static_cast<char>(std::toupper(static_cast<unsigned char>(it->first.front())));
    label += std::to_string(it->second);
  }
  return label.empty() ? cohort.workload_name : label;
}

// The axes' values, the last axis listed first: the overview's row order.
std::vector<std::int64_t> axes_key(const CohortSection &cohort) {
  std::vector<std::int64_t> key;
  for (auto it = cohort.axes.rbegin(); it != cohort.axes.rend(); ++it) key.push_back(it->second);
  return key;
}

} // namespace

ColorAssignment assign_colors(const ReportModel &model) {
  std::vector<std::string> names;
  const auto add = [&](const std::string &name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const CohortSection &cohort : model.cohorts)
    for (const RunFigures &run : cohort.runs) add(run.implementation);
  for (const Sweep &sweep : model.sweeps)
    for (const SweepSeries &series : sweep.series) add(series.implementation);
  return ColorAssignment(std::move(names));
}

std::vector<Chart> cohort_charts(const CohortSection &cohort, const ColorAssignment &colors) {
  std::vector<Chart> charts;
  for (auto chart : {median_chart(cohort, colors), speedup_chart(cohort, colors), floor_chart(cohort, colors),
                     memory_chart(cohort)})
    if (chart) charts.push_back(std::move(*chart));
  return charts;
}

std::optional<Chart> floor_overview_chart(const std::vector<CohortSection> &cohorts,
                                          const ColorAssignment &colors) {
  std::vector<const CohortSection *> with_ratio;
  for (const CohortSection &cohort : cohorts) {
    if (std::any_of(cohort.runs.begin(), cohort.runs.end(),
                    [](const RunFigures &run) { return run.ratio_to_floor.has_value(); }))
      with_ratio.push_back(&cohort);
  }
  if (with_ratio.size() < 2) return std::nullopt;
  std::stable_sort(with_ratio.begin(), with_ratio.end(), [](const CohortSection *a, const CohortSection *b) {
    return axes_key(*a) < axes_key(*b);
  });

  BarChartSpec spec;
  spec.test_id = "chart-floor-overview";
  spec.title = "Ratio to the cuBLAS floor across workloads";
  spec.description = "One bar per run: its median ÷ the median of cublas-floor in the same cohort (same "
                     "workload, protocol and environment). 1× would be the floor itself; lower is closer "
                     "to it. Rows are labelled by the workload's axes.";
  spec.axis_label = "median ÷ cublas-floor median (×, lower is closer to the floor)";
  spec.series.push_back(BarSeries{"ratio to floor", ""});
  spec.reference = ReferenceLine{1.0, "1× = cublas-floor"};
  for (const CohortSection *cohort : with_ratio) {
    for (const RunFigures &run : cohort->runs) {
      if (!run.ratio_to_floor) continue;
      BarValue value;
      value.value = *run.ratio_to_floor;
      value.text = fmt::format("{:.2f}× {}", *run.ratio_to_floor, run.id);
      value.tooltip = fmt::format("{}, {}: {:.3f}× the floor's median", cohort->workload_name, run.id,
                                  *run.ratio_to_floor);
      spec.rows.push_back(BarRow{axes_label(*cohort),
                                 std::string(colors.color_of(run.implementation)),
                                 is_failure(run.status),
                                 {value}});
    }
  }
  return Chart{render_bar_chart(spec), spec.title, spec.description, spec.test_id};
}

std::optional<Chart> median_chart(const CohortSection &cohort, const ColorAssignment &colors) {
  double largest = 0.0;
  for (const RunFigures &run : cohort.runs) {
    if (run.median_ns)
      largest = std::max(largest, run.median_interval ? run.median_interval->high : *run.median_ns);
  }
  if (largest <= 0.0) return std::nullopt;
  const DisplayUnit unit = time_unit_for(largest);

  BarChartSpec spec;
  spec.test_id = "chart-median-" + cohort.slug;
  spec.title = fmt::format("Median latency per implementation: {}", cohort.workload_name);
  spec.description =
      "Bars: median latency of each run. Whiskers: the 95 % interval of the median. Shorter is faster.";
  spec.axis_label = fmt::format("median latency ({})", unit.name);
  spec.series.push_back(BarSeries{"median", ""});
  for (const RunFigures &run : cohort.runs) {
    if (!run.median_ns) continue;
    BarValue value;
    value.value = *run.median_ns / unit.scale;
    value.text = fmt::format("{} {}", format_significant(value.value), unit.name);
    value.tooltip = fmt::format("{}: median {}", run.id, compare::text::duration(*run.median_ns));
    if (run.median_interval) {
      value.low = run.median_interval->low / unit.scale;
      value.high = run.median_interval->high / unit.scale;
      value.tooltip += ", 95 % interval " + interval_text(*run.median_interval, unit.scale, unit.name);
    }
    spec.rows.push_back(BarRow{
        row_label(run), std::string(colors.color_of(run.implementation)), is_failure(run.status), {value}});
  }
  return Chart{render_bar_chart(spec), spec.title, spec.description, spec.test_id};
}

std::optional<Chart> speedup_chart(const CohortSection &cohort, const ColorAssignment &colors) {
  BarChartSpec spec;
  spec.test_id = "chart-speedup-" + cohort.slug;
  spec.title = fmt::format("Speedup over {}: {}", cohort.baseline_id, cohort.workload_name);
  spec.description =
      "Bars: baseline median ÷ candidate median. Whiskers: 95 % bootstrap interval of the speedup. "
      "Right of the dashed 1× line is faster than the baseline.";
  spec.axis_label = fmt::format("speedup over {} (×, higher is faster)", cohort.baseline_id);
  spec.series.push_back(BarSeries{"speedup", ""});
  spec.reference = ReferenceLine{1.0, "1× = " + cohort.baseline_id};
  std::size_t candidates = 0;
  for (const RunFigures &run : cohort.runs) {
    BarValue value;
    if (run.is_baseline) {
      value.value = 1.0;
      value.text = "baseline";
      value.tooltip = run.id + " is the baseline";
    } else if (run.speedup) {
      value.value = run.speedup->estimate;
      value.low = run.speedup->low;
      value.high = run.speedup->high;
      value.text = fmt::format("{:.3f}× ({})", run.speedup->estimate, run.verdict);
      value.tooltip = fmt::format("{}: {:.3f}× [{:.3f}, {:.3f}]; {}", run.id, run.speedup->estimate,
                                  run.speedup->low, run.speedup->high, run.verdict_detail);
      ++candidates;
    } else {
      continue;
    }
    spec.rows.push_back(
        BarRow{row_label(run), std::string(colors.color_of(run.implementation)), false, {value}});
  }
  if (candidates == 0) return std::nullopt;
  return Chart{render_bar_chart(spec), spec.title, spec.description, spec.test_id};
}

std::optional<Chart> floor_chart(const CohortSection &cohort, const ColorAssignment &colors) {
  BarChartSpec spec;
  spec.test_id = "chart-floor-" + cohort.slug;
  spec.title = fmt::format("Ratio to the cuBLAS floor: {}", cohort.workload_name);
  spec.description = "Bars: each median ÷ the median of cublas-floor, which times only the two GEMMs. "
                     "1× would be the floor itself; lower is closer to it.";
  spec.axis_label = "median ÷ cublas-floor median (×, lower is closer to the floor)";
  spec.series.push_back(BarSeries{"ratio to floor", ""});
  spec.reference = ReferenceLine{1.0, "1× = cublas-floor"};
  for (const RunFigures &run : cohort.runs) {
    if (!run.ratio_to_floor) continue;
    BarValue value;
    value.value = *run.ratio_to_floor;
    value.text = fmt::format("{:.2f}×", *run.ratio_to_floor);
    value.tooltip = fmt::format("{}: {:.3f}× the floor's median", run.id, *run.ratio_to_floor);
    spec.rows.push_back(BarRow{
        row_label(run), std::string(colors.color_of(run.implementation)), is_failure(run.status), {value}});
  }
  if (spec.rows.empty()) return std::nullopt;
  return Chart{render_bar_chart(spec), spec.title, spec.description, spec.test_id};
}

std::optional<Chart> memory_chart(const CohortSection &cohort) {
  double largest = 0.0;
  bool any = false;
  for (const RunFigures &run : cohort.runs) {
    any = any || run.peak_bytes || run.workspace_bytes;
    largest = std::max({largest, run.peak_bytes.value_or(0.0), run.workspace_bytes.value_or(0.0)});
  }
  if (!any) return std::nullopt;
  const DisplayUnit unit = byte_unit_for(largest);

  BarChartSpec spec;
  spec.test_id = "chart-memory-" + cohort.slug;
  spec.title = fmt::format("Memory per implementation: {}", cohort.workload_name);
  spec.description = "Peak: the high-water mark of inputs, outputs and workspace together. "
                     "Workspace: everything the implementation holds beyond its inputs and outputs.";
  spec.axis_label = fmt::format("memory ({})", unit.name);
  spec.series = {BarSeries{"peak", std::string(kPeakColor)},
                 BarSeries{"workspace", std::string(kWorkspaceColor)}};
  for (const RunFigures &run : cohort.runs) {
    if (!run.peak_bytes && !run.workspace_bytes) continue;
    BarRow row{row_label(run), "", false, {}};
    for (const auto &bytes : {run.peak_bytes, run.workspace_bytes}) {
      if (!bytes) {
        row.values.emplace_back();
        continue;
      }
      row.values.push_back(BarValue{*bytes / unit.scale, std::nullopt, std::nullopt, format_bytes(*bytes),
                                    fmt::format("{}: {:.0f} bytes", run.id, *bytes)});
    }
    spec.rows.push_back(std::move(row));
  }
  return Chart{render_bar_chart(spec), spec.title, spec.description, spec.test_id};
}

std::string axis_symbol(const std::string &axis) {
  if (axis == "tokens") return "T";
  if (axis == "vocab") return "V";
  if (axis == "hidden") return "H";
  return axis;
}

std::string axis_words(const std::string &axis) {
  if (axis == "tokens") return "number of tokens T";
  if (axis == "vocab") return "vocabulary size V";
  if (axis == "hidden") return "hidden size H";
  return axis;
}

std::optional<Chart> sweep_time_chart(const Sweep &sweep, const ColorAssignment &colors) {
  double largest = 0.0;
  for (const SweepSeries &series : sweep.series)
    for (const SweepPoint &p : series.points) largest = std::max(largest, p.median_ns);
  if (largest <= 0.0) return std::nullopt;
  const DisplayUnit unit = time_unit_for(largest);

  LineChartSpec spec;
  spec.test_id = "chart-sweep-time-" + sweep.slug;
  const std::string symbol = axis_symbol(sweep.axis);
  spec.title = fmt::format("Median latency vs {}: {} ({})", symbol, sweep.operation_name, sweep.fixed_axes);
  spec.description = fmt::format("One line per implementation: median latency at each {}, with the 95 % "
                                 "interval of the median as whiskers.",
                                 axis_words(sweep.axis));
  spec.x_label = sweep.axis == symbol ? symbol : fmt::format("{} {}", sweep.axis, symbol);
  spec.y_label = fmt::format("median latency ({})", unit.name);
  for (const SweepSeries &series : sweep.series) {
    LineSeries line{series.implementation, std::string(colors.color_of(series.implementation)), {}};
    for (const SweepPoint &p : series.points) {
      LinePoint point;
      point.x = static_cast<double>(p.value);
      point.y = p.median_ns / unit.scale;
      if (p.median_interval) {
        point.low = p.median_interval->low / unit.scale;
        point.high = p.median_interval->high / unit.scale;
      }
      point.flagged = is_failure(p.status);
      point.tooltip =
          fmt::format("{} at {}={}: {}{}", p.run_id, symbol, p.value, compare::text::duration(p.median_ns),
                      point.flagged ? fmt::format(" ({})", to_string(p.status)) : "");
      line.points.push_back(std::move(point));
    }
    spec.series.push_back(std::move(line));
  }
  return Chart{render_line_chart(spec), spec.title, spec.description, spec.test_id};
}

std::optional<Chart> sweep_tflops_chart(const Sweep &sweep, const ColorAssignment &colors) {
  LineChartSpec spec;
  spec.test_id = "chart-sweep-tflops-" + sweep.slug;
  const std::string symbol = axis_symbol(sweep.axis);
  spec.title =
      fmt::format("Effective TFLOP/s vs {}: {} ({})", symbol, sweep.operation_name, sweep.fixed_axes);
  spec.description =
      fmt::format("One line per implementation: the workload's GEMM FLOPs divided by the median "
                  "latency, at each {}, as each run reports it.",
                  axis_words(sweep.axis));
  spec.x_label = sweep.axis == symbol ? symbol : fmt::format("{} {}", sweep.axis, symbol);
  spec.y_label = "effective TFLOP/s";
  // Throughput grows with T and then flattens: a linear axis shows the
  // plateau, where a log axis would flatten the climb.
  spec.log_y_above_ratio = 1e300;
  for (const SweepSeries &series : sweep.series) {
    LineSeries line{series.implementation, std::string(colors.color_of(series.implementation)), {}};
    for (const SweepPoint &p : series.points) {
      if (!p.tflops) continue;
      LinePoint point;
      point.x = static_cast<double>(p.value);
      point.y = *p.tflops;
      point.flagged = is_failure(p.status);
      point.tooltip =
          fmt::format("{} at {}={}: {} TFLOP/s", p.run_id, symbol, p.value, format_significant(*p.tflops));
      line.points.push_back(std::move(point));
    }
    if (!line.points.empty()) spec.series.push_back(std::move(line));
  }
  if (spec.series.empty()) return std::nullopt;
  return Chart{render_line_chart(spec), spec.title, spec.description, spec.test_id};
}

} // namespace kibench::report
