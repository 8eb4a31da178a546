// The terminal rendering of a compare report (the default format).
#pragma once

#include <string>

#include "lib/compare/compare_report.hpp"

namespace kibench::compare {

// Several cohorts (one per workload, say) are summarized on one screen: a
// closing table of workloads × implementations with each speedup over the
// baseline, its interval and verdict, or the run's status; `verbose`
// prints every cohort in full before it, and the cross-workload views.
std::string render_table(const CompareReport &report, bool verbose = false);

} // namespace kibench::compare
