// Every chart of a report as an SVG file of its own (`kibench report
// --charts DIR`), for documents that embed images rather than a page: the
// same charts, colours and order as the page, each with the SVG namespace
// and the chart stylesheet inside it, so it renders alike in a browser, an
// <img> tag or a Markdown viewer.
#pragma once

#include <string>
#include <vector>

#include "lib/report/report_model.hpp"

namespace kibench::report {

struct ChartFile {
  std::string name; // <data-testid>.svg
  std::string svg;  // a complete SVG document
};

std::vector<ChartFile> chart_files(const ReportModel &model);

// One chart's inline <svg> (as the page holds it) made a document.
std::string standalone_svg(const std::string &inline_svg);

} // namespace kibench::report
