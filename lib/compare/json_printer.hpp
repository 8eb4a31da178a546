// A compare report as one JSON document ("format":
// "kibench.dev/compare/v1"); docs/compare.md describes every field.
#pragma once

#include "lib/compare/compare_report.hpp"
#include "lib/json/value.hpp"

namespace kibench::compare {

inline constexpr std::string_view kCompareFormat = "kibench.dev/compare/v1";

json::Value report_document(const CompareReport &report);

} // namespace kibench::compare
