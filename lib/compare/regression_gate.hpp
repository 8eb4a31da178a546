// The CI regression gate (`--fail-if-slower PCT`): it fails when a
// candidate is significantly slower than its cohort's baseline — the
// interval of the difference of medians lies entirely above zero — and its
// relative slowdown (the point estimate) exceeds PCT percent. The verdict's
// noise-floor threshold does not apply here: PCT is the tolerance the user
// chose. A gate that compared nothing fails too: a regression check that
// could not run must not pass silently.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kibench::compare {

struct CompareReport;

struct Regression {
  std::size_t baseline = 0, candidate = 0; // run indices
  double relative_effect = 0.0;            // (candidate - baseline) / baseline
  double relative_low = 0.0, relative_high = 0.0;
};

struct GateResult {
  double percent = 0.0;
  std::size_t checked = 0; // candidate/baseline pairs examined
  std::vector<Regression> regressions;

  [[nodiscard]] bool passed() const { return checked > 0 && regressions.empty(); }
};

GateResult evaluate_gate(const CompareReport &report, double percent);

// One line: what failed, or that the gate passed.
std::string gate_summary(const CompareReport &report, const GateResult &gate);

} // namespace kibench::compare
