// The report's stylesheet, inlined into the page: a report is one file
// that opens anywhere, offline, with nothing to fetch (system fonts only).
#pragma once

#include <string>
#include <string_view>

namespace kibench::report {

// The rules of the charts alone (svg.chart and its text), which a chart
// written as a file of its own carries inside it.
std::string_view chart_css();
// The whole page's, chart_css() included.
std::string page_css();

} // namespace kibench::report
