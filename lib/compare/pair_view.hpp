// Two runs that cannot be ranked against each other, described: the reason
// codes, and — where they compute the same operation — a clearly labelled
// view with the ratio of their medians and its caveats. A view is for
// discovery, never a record or a ranking.
//
// Profiles (KernelIndex's comparison profiles):
//   source_native        the same workload and environment, measured by
//                        the same harness: the same upstream source
//                        (spec.sourceNative.source), the same protocol, or
//                        the same protocol family — the source's own
//                        comparison, short only of what ranking needs
//   compatible_workload  the same operation otherwise (another workload or
//                        environment, or another harness)
//   none                 different operations: reasons only
// (strict_exact — one cohort, both rankable — is the ranking itself;
// environment_drift, kibench's own, a ranking across environments under
// --allow-environment-drift (compare_report.hpp); `reported` is what a run
// without raw samples carries: its median as its source reported it.)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/compare/reason_code.hpp"

namespace kibench::compare {

enum class ViewProfile { none, source_native, compatible_workload };

std::string_view to_string(ViewProfile profile);

struct PairView {
  std::size_t anchor = 0; // index of the run the other is described against
  std::size_t run = 0;
  std::vector<Reason> reasons;
  ViewProfile profile = ViewProfile::none;
  std::optional<double> speedup; // anchor median / run median (> 1: the run is faster)
  std::vector<std::string> caveats;
};

// anchor == run describes a reference point: its own reasons, no view.
PairView view_pair(const std::vector<ComparedRun> &runs, std::size_t anchor, std::size_t run);

} // namespace kibench::compare
