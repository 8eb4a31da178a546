// The terminal rendering of a compare report (the default format).
#pragma once

#include <string>

#include "lib/compare/compare_report.hpp"

namespace kibench::compare {

std::string render_table(const CompareReport &report);

} // namespace kibench::compare
