#include "lib/report/chart_files.hpp"

#include <optional>
#include <stdexcept>

#include "lib/report/page_style.hpp"
#include "lib/report/report_charts.hpp"

namespace kibench::report {

std::string standalone_svg(const std::string &inline_svg) {
  constexpr std::string_view kOpen = "<svg ", kDescEnd = "</desc>\n";
  const std::size_t desc_end = inline_svg.find(kDescEnd);
  if (!inline_svg.starts_with(kOpen) || desc_end == std::string::npos)
    throw std::logic_error("standalone_svg: not a chart's <svg> (no opening tag, title and desc)");
  // <title> and <desc> stay the first children; the style and a white
  // background (what the page's card gives) follow them.
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" ";
  const std::size_t body = desc_end + kDescEnd.size();
  out.append(inline_svg, kOpen.size(), body - kOpen.size());
  out += "<style>";
  out += chart_css();
  out += "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  out.append(inline_svg, body);
  return out;
}

std::vector<ChartFile> chart_files(const ReportModel &model) {
  const ColorAssignment colors = assign_colors(model);
  std::vector<Chart> charts;
  if (auto overview = floor_overview_chart(model.cohorts, colors)) charts.push_back(std::move(*overview));
  for (const Sweep &sweep : model.sweeps) {
    for (auto chart : {sweep_time_chart(sweep, colors), sweep_tflops_chart(sweep, colors)})
      if (chart) charts.push_back(std::move(*chart));
  }
  for (const CohortSection &cohort : model.cohorts)
    for (Chart &chart : cohort_charts(cohort, colors)) charts.push_back(std::move(chart));
  std::vector<ChartFile> files;
  files.reserve(charts.size());
  for (const Chart &chart : charts) files.push_back({chart.id + ".svg", standalone_svg(chart.svg)});
  return files;
}

} // namespace kibench::report
