#include "lib/compare/pair_view.hpp"

#include <fmt/core.h>

#include "lib/enum_names.hpp"

namespace kibench::compare {
namespace {

bool same_harness(const ComparedRun &a, const ComparedRun &b) {
  if (!a.upstream_source.empty() && a.upstream_source == b.upstream_source) return true;
  if (!a.protocol_family.empty() && a.protocol_family == b.protocol_family) return true;
  return a.protocol_digest == b.protocol_digest;
}

// The source's own comparison: one harness, one problem, one machine. Runs
// of another workload or environment are only ever compatible_workload,
// whoever measured them.
bool source_native(const ComparedRun &a, const ComparedRun &b) {
  return same_harness(a, b) && a.workload_digest == b.workload_digest &&
         a.environment_digest == b.environment_digest;
}

} // namespace

std::string_view to_string(ViewProfile profile) {
  static constexpr EnumName<ViewProfile> kNames[] = {{ViewProfile::none, "none"},
                                                     {ViewProfile::source_native, "source_native"},
                                                     {ViewProfile::compatible_workload, "compatible_workload"}};
  return name_in(kNames, profile, "none");
}

PairView view_pair(const std::vector<ComparedRun> &runs, std::size_t anchor, std::size_t run) {
  const ComparedRun &a = runs[anchor];
  const ComparedRun &b = runs[run];
  PairView out;
  out.anchor = anchor;
  out.run = run;
  out.reasons = reasons_between(a, b);
  // Nothing in common to show; or the run is the reference point itself.
  if (a.operation_digest != b.operation_digest || anchor == run) return out;

  out.profile = source_native(a, b) ? ViewProfile::source_native : ViewProfile::compatible_workload;
  if (a.median_ns && b.median_ns && *b.median_ns > 0) out.speedup = *a.median_ns / *b.median_ns;
  if (out.profile == ViewProfile::compatible_workload) {
    out.caveats.push_back("discovery only: the same operation measured on another workload, environment or "
                          "protocol; the ratio is not a speedup on one problem, never a record or a ranking");
  } else {
    out.caveats.push_back(
        "as the same harness reported them: a ratio without an interval, never a record or a "
        "ranking");
  }
  for (const Reason &reason : out.reasons) {
    if (reason.code == ReasonCode::status_not_passed) {
      out.caveats.push_back("a run that did not pass its correctness check: its time is not evidence of a "
                            "correct result");
    } else if (reason.code == ReasonCode::missing_raw_samples) {
      out.caveats.push_back(
          "without raw samples there is no interval and no noise floor: reported medians only");
    } else if (reason.code == ReasonCode::metric_mismatch) {
      out.caveats.push_back("the two medians summarize different primary statistics");
    }
  }
  if (!out.speedup) out.caveats.push_back("no ratio: a median is missing");
  return out;
}

} // namespace kibench::compare
