// The report page: one self-contained HTML5 document — inline CSS, inline
// SVG charts, no scripts, nothing fetched — with the sweeps (over T, V, H) first
// (an overview across workloads), then a section per cohort (charts, the
// timing table, the correctness table, notes), then the environments. Every string from a
// manifest is HTML-escaped. Only formats the model: no number is computed
// here that the model does not hold.
#pragma once

#include <string>

#include "lib/report/report_model.hpp"

namespace kibench::report {

std::string render_report_html(const ReportModel &model);

} // namespace kibench::report
