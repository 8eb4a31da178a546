// One cohort of compare's report as the page shows it: its workload and
// protocol in words, each member's figures, and the cohort's own facts —
// compare's speedup interval and verdict against the baseline, the rank,
// why a member could not be ranked, and each member's ratio to the
// cublas-floor run when the cohort has one. Runs are listed baseline
// first, cublas-floor last, the others in the order given.
#pragma once

#include <string_view>
#include <vector>

#include "lib/compare/compare_report.hpp"
#include "lib/report/manifest_index.hpp"
#include "lib/report/report_model.hpp"
#include "lib/report/slug.hpp"

namespace kibench::report {

// The implementation that times only the two GEMMs (cuBLAS), a lower bound
// no loss kernel can beat; ratios to it say how far from that bound a run is.
inline constexpr std::string_view kFloorImplementation = "cublas-floor";

// `figures` holds read_run_figures of every run of the report, by index.
CohortSection describe_cohort(const compare::CompareReport &report, const compare::Cohort &cohort,
                              const std::vector<RunFigures> &figures, const ManifestIndex &index,
                              SlugRegistry &slugs);

} // namespace kibench::report
