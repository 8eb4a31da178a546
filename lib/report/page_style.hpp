// The report's stylesheet, inlined into the page: a report is one file
// that opens anywhere, offline, with nothing to fetch (system fonts only).
#pragma once

#include <string_view>

namespace kibench::report {

std::string_view page_css();

} // namespace kibench::report
