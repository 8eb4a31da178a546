// The words and numbers both human-readable printers (table, markdown) use
// for a compare report, so that the two say the same thing.
#pragma once

#include <optional>
#include <string>

#include "lib/compare/compare_report.hpp"

namespace kibench::compare::text {

// 812 ns, 12.34 µs, 1.235 ms, 2.500 s: four significant digits.
std::string duration(double ns);
// "+1.23 %", "−0.45 %" (signed; a real minus sign).
std::string signed_percent(double fraction);
// "1.00 %"
std::string percent(double fraction);
// "sha256:0123456789ab…"
std::string short_digest(const std::string &digest);

// "−1.20 % [−2.10 %, −0.30 %]": the relative difference and its interval.
std::string relative_difference(const PairComparison &c);
// "1.012× [1.003, 1.021]"
std::string speedup(const PairComparison &c);
// "paired (40 rounds)", "paired (40 rounds, fixed order)" / "independent"
std::string pairing(const PairComparison &c);
// "shared: the interval of the difference includes zero (threshold 1.00 % = minimum effect)"
std::string verdict(const PairComparison &c);
// "1.00 % (stated by the protocol)" / "1.00 % (default: the protocol states none)"
std::string minimum_effect(const ComparedRun &run);
// "WORKLOAD_MISMATCH, ENVIRONMENT_MISMATCH"
std::string reason_codes(const PairView &view);
// "compatible_workload view: speedup 3.2× over x (not a ranking)", "no view: different operations",
// or that it is the reference point itself.
std::string view_summary(const PairView &view, const CompareReport &report);
// "strict_exact" when the cohort has a ranking, "environment_drift" when it
// is ranked across environments, "reported" when it has none.
std::string cohort_profile(const Cohort &cohort);
// The median with its source: "1.234 ms" or "213.2 ms (reported)"; "—" when none.
std::string median(const ComparedRun &run);
// Number of samples or "—".
std::string sample_count(const ComparedRun &run);

} // namespace kibench::compare::text
