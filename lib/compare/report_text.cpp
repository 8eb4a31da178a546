#include <algorithm>
#include "lib/compare/report_text.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace kibench::compare::text {

std::string duration(double ns) {
  struct Unit {
    double scale;
    const char *name;
  };
  static constexpr Unit units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1.0, "ns"}};
  for (const Unit &unit : units) {
    if (std::fabs(ns) >= unit.scale || unit.scale == 1.0) {
      const double value = ns / unit.scale;
      // Four significant digits: 1.235, 12.35, 123.5, 1235 (ns stay whole).
      const int decimals = unit.scale == 1.0         ? 0
                           : std::fabs(value) >= 100 ? 1
                           : std::fabs(value) >= 10  ? 2
                                                     : 3;
      return fmt::format("{:.{}f} {}", value, decimals, unit.name);
    }
  }
  return fmt::format("{:.0f} ns", ns);
}

std::string signed_percent(double fraction) {
  const double value = fraction * 100.0;
  const std::string digits = fmt::format("{:.2f} %", std::fabs(value));
  if (digits == "0.00 %") return "±" + digits;
  return (value < 0 ? "−" : "+") + digits;
}

std::string percent(double fraction) {
  return fmt::format("{:.2f} %", fraction * 100.0);
}

std::string short_digest(const std::string &digest) {
  constexpr std::size_t shown = std::string_view("sha256:").size() + 12;
  return digest.size() > shown ? digest.substr(0, shown) + "…" : digest;
}

std::string relative_difference(const PairComparison &c) {
  // A time cannot fall by more than all of it: a resampled bound beyond
  // −100 % is shown at −100 %.
  return fmt::format("{} [{}, {}]", signed_percent(c.relative_effect), signed_percent(std::max(c.relative_low, -1.0)),
                     signed_percent(c.relative_high));
}

std::string speedup(const PairComparison &c) {
  const stats::Interval &s = c.medians.speedup;
  return fmt::format("{:.3f}× [{:.3f}, {:.3f}]", s.estimate, s.low, s.high);
}

std::string pairing(const PairComparison &c) {
  if (c.pairing == Pairing::paired)
    return fmt::format("paired ({} rounds{})", c.baseline_samples, c.fixed_order ? ", fixed order" : "");
  return "independent";
}

std::string verdict(const PairComparison &c) {
  return fmt::format("{}: {} (threshold {} = max(minimum effect {}, noise floor {}); {})",
                     to_string(c.verdict), c.explanation, percent(c.threshold), percent(c.minimum_effect),
                     percent(c.noise_floor), c.pairing_note);
}

std::string minimum_effect(const ComparedRun &run) {
  return fmt::format("{} ({})", percent(run.minimum_effect),
                     run.minimum_effect_stated ? "stated by the protocol"
                                               : "default: the protocol states none");
}

std::string reason_codes(const PairView &view) {
  std::vector<std::string_view> codes;
  for (const Reason &reason : view.reasons) codes.push_back(to_string(reason.code));
  return fmt::format("{}", fmt::join(codes, ", "));
}

std::string view_summary(const PairView &view, const CompareReport &report) {
  if (view.anchor == view.run) return "the reference point the others are described against";
  if (view.profile == ViewProfile::none) return "no view: different operations";
  const std::string ratio =
      view.speedup ? fmt::format("speedup {:.3f}× over {}", *view.speedup, report.runs[view.anchor].id)
                   : std::string("no ratio");
  return fmt::format("{} view: {} (not a ranking)", to_string(view.profile), ratio);
}

std::string cohort_profile(const Cohort &cohort) {
  return std::string(compare::cohort_profile(cohort));
}

std::string median(const ComparedRun &run) {
  if (!run.median_ns) return "—";
  return run.raw ? duration(*run.median_ns) : duration(*run.median_ns) + " (reported)";
}

std::string sample_count(const ComparedRun &run) {
  return run.raw ? fmt::format("{}", run.raw->samples.size()) : std::string("—");
}

} // namespace kibench::compare::text
