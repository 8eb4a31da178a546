#include "lib/compare/regression_gate.hpp"

#include <fmt/format.h>

#include "lib/compare/compare_report.hpp"

namespace kibench::compare {

GateResult evaluate_gate(const CompareReport &report, double percent) {
  GateResult gate;
  gate.percent = percent;
  for (const Cohort &cohort : report.cohorts) {
    for (const RankedMember &member : cohort.ranking) {
      if (!member.vs_baseline) continue;
      const PairComparison &c = *member.vs_baseline;
      ++gate.checked;
      const bool significantly_slower = c.medians.difference.low > 0.0;
      if (significantly_slower && c.relative_effect * 100.0 > percent) {
        gate.regressions.push_back(
            Regression{*cohort.baseline, member.run, c.relative_effect, c.relative_low, c.relative_high});
      }
    }
  }
  return gate;
}

std::string gate_summary(const CompareReport &report, const GateResult &gate) {
  if (gate.checked == 0) {
    return fmt::format("regression gate: nothing to check: no candidate shares a cohort with a rankable "
                       "baseline (see the reasons above); a gate that checks nothing fails");
  }
  if (gate.regressions.empty()) {
    return fmt::format("regression gate passed: no candidate of {} is significantly slower than its baseline "
                       "by more than {} %",
                       gate.checked, gate.percent);
  }
  std::vector<std::string> parts;
  for (const Regression &r : gate.regressions) {
    parts.push_back(fmt::format("{} is {:+.2f} % [{:+.2f} %, {:+.2f} %] slower than {}",
                                report.runs[r.candidate].id, r.relative_effect * 100.0,
                                r.relative_low * 100.0, r.relative_high * 100.0, report.runs[r.baseline].id));
  }
  return fmt::format("regression gate failed (more than {} % slower, interval above zero): {}", gate.percent,
                     fmt::join(parts, "; "));
}

} // namespace kibench::compare
