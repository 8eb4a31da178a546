// `kibench report` as a library call, up to the page: read the runs and
// let compare group them into cohorts by comparison key, choose each
// cohort's baseline and bootstrap every candidate's speedup; then gather
// what the page shows of each cohort, the sweeps over any axis, and the
// environments. docs/report.md describes the page.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/report/report_model.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::report {

struct ReportOptions {
  std::string title = "kibench report";
  std::optional<std::string> baseline; // compare's --baseline selector
  stats::BootstrapSettings bootstrap;
};

// RUN arguments as `kibench compare` takes them: run directories, run
// manifests, or directories of run directories. InputError (exit 2) for
// anything compare refuses.
ReportModel build_report(const std::vector<std::filesystem::path> &arguments, const ReportOptions &options);

} // namespace kibench::report
