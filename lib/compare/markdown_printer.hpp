// GitHub-flavoured markdown of a compare report, for CI job summaries
// ($GITHUB_STEP_SUMMARY): one section per cohort, a table of the ranking,
// the verdicts in words, and what could not be ranked.
#pragma once

#include <string>

#include "lib/compare/compare_report.hpp"

namespace kibench::compare {

std::string render_markdown(const CompareReport &report);

} // namespace kibench::compare
