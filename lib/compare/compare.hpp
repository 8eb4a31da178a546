// `kibench compare` as a library call: group runs into cohorts by
// comparison key, choose baselines, rank each cohort, describe what cannot
// be ranked, and apply the regression gate. docs/compare.md has the
// algorithm in full.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compare_report.hpp"
#include "lib/compare/compared_run.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::compare {

struct CompareOptions {
  std::optional<std::string> baseline; // a selector (see select_runs)
  stats::BootstrapSettings bootstrap;
  std::optional<double> fail_if_slower_percent;
  // Rank runs whose environments differ only where the environment drift
  // rule tolerates it (environment_drift.hpp) in one cohort, with the
  // difference as a caveat on each of its verdicts.
  bool allow_environment_drift = false;
};

// The runs a --baseline selector names: its id, implementation name, run
// metadata.name, run digest (or a prefix of at least "sha256:" + 8 hex),
// or a path: the run file itself or a directory holding it.
std::vector<std::size_t> select_runs(const std::vector<ComparedRun> &runs, std::string_view selector);

// InputError when --baseline names no run.
CompareReport compare_runs(std::vector<ComparedRun> runs, const CompareOptions &options);

} // namespace kibench::compare
