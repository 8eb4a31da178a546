// Everything `kibench compare` found, as data: the printers (table,
// markdown, json) only format it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/compare/field_difference.hpp"
#include "lib/compare/pair_comparison.hpp"
#include "lib/compare/pair_view.hpp"
#include "lib/compare/regression_gate.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::compare {

struct RankedMember {
  std::size_t run = 0;
  std::size_t rank = 1;
  std::size_t tier_leader = 0;
  bool is_baseline = false;
  std::optional<PairComparison> vs_baseline; // absent for the baseline itself
  // What qualifies its verdict beyond the comparison itself: in a cohort
  // ranked across environment drift, how its environment differs from the
  // baseline's (or that the cohort's environments do).
  std::vector<std::string> caveats;
};

// Runs that share one comparison key.
struct Cohort {
  std::string comparison_key;
  std::vector<std::size_t> members;    // in the order given
  std::optional<std::size_t> baseline; // the rankable member candidates are measured against
  std::size_t reference = 0;           // who unranked members are described against (the baseline if any)
  std::vector<RankedMember> ranking;   // fastest first
  std::vector<PairView> not_ranked;    // members that are not rankable, against `reference`
  std::vector<std::string> notes;
  // Members measured in more than one environment, ranked together under
  // --allow-environment-drift: every field their environments differ in
  // (each tolerated by the rule). Empty for a strict cohort.
  std::vector<FieldDifference> environment_drift;
};

// KernelIndex's profile of a cohort: "strict_exact" (one comparison key,
// ranked), "reported" (nothing rankable); kibench's own
// "environment_drift" for a cohort ranked across environments under
// --allow-environment-drift, which KernelIndex would not rank together.
std::string_view cohort_profile(const Cohort &cohort);

struct CompareReport {
  std::vector<ComparedRun> runs;
  std::size_t anchor = 0; // the baseline run (--baseline, else "reference"/"cpu-reference", else the first)
  std::string anchor_choice; // how it was chosen, in words
  std::vector<Cohort> cohorts;
  std::vector<PairView> not_comparable; // each run outside the anchor's cohort, against the anchor
  stats::BootstrapSettings bootstrap;
  std::optional<GateResult> gate;

  [[nodiscard]] const Cohort &cohort_of(std::size_t run) const;
};

} // namespace kibench::compare
