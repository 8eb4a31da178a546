#include "lib/compare/pair_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include <fmt/core.h>

#include "lib/stats/noise_floor.hpp"
#include "lib/stats/random_index.hpp"

namespace kibench::compare {
namespace {

struct PairedSeries {
  std::vector<double> baseline, candidate;
};

// Sample k of each run from the same interleave round. A round sampled
// more than once by one run (never, from kibench's harness) keeps its first.
PairedSeries pair_by_round(const RawSeries &baseline, const RawSeries &candidate) {
  std::map<std::size_t, double> baseline_by_round;
  for (const auto &sample : baseline.samples) baseline_by_round.emplace(sample.round, sample.ns);
  PairedSeries out;
  std::map<std::size_t, bool> used;
  for (const auto &sample : candidate.samples) {
    const auto match = baseline_by_round.find(sample.round);
    if (match == baseline_by_round.end() || used[sample.round]) continue;
    used[sample.round] = true;
    out.baseline.push_back(match->second);
    out.candidate.push_back(sample.ns);
  }
  return out;
}

std::string percent(double fraction) {
  return fmt::format("{:.2f} %", fraction * 100.0);
}

} // namespace

std::string_view to_string(Pairing pairing) {
  return pairing == Pairing::paired ? "paired" : "independent";
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
  case Verdict::faster:
    return "faster";
  case Verdict::slower:
    return "slower";
  case Verdict::shared:
    return "shared";
  }
  return "shared";
}

PairComparison compare_pair(const ComparedRun &baseline, const ComparedRun &candidate,
                            const stats::BootstrapSettings &settings) {
  if (!baseline.rankable() || !candidate.rankable())
    throw std::logic_error("compare_pair: both runs must have passed and have raw samples");
  PairComparison out;
  stats::BootstrapSettings stream = settings;
  stream.seed = stats::derive_seed(settings.seed, baseline.digest + "|" + candidate.digest);

  const RawSeries &b = *baseline.raw;
  const RawSeries &c = *candidate.raw;
  const bool same_invocation = !b.invocation.empty() && b.invocation == c.invocation;
  PairedSeries pairs;
  if (same_invocation && baseline.interleaved && candidate.interleaved) pairs = pair_by_round(b, c);

  if (pairs.baseline.size() >= kMinimumSamples) {
    out.pairing = Pairing::paired;
    out.pairing_note = fmt::format("paired on {} interleave rounds", pairs.baseline.size());
    out.fixed_order = !baseline.rotated_order || !candidate.rotated_order;
    if (out.fixed_order)
      out.pairing_note += " in a fixed order: the bias of each one's place in the round is not cancelled";
    out.baseline_samples = out.candidate_samples = pairs.baseline.size();
    out.medians = stats::bootstrap_paired(pairs.baseline, pairs.candidate, stream);
    out.noise_floor = stats::paired_noise_floor(pairs.baseline, pairs.candidate);
  } else {
    out.pairing = Pairing::independent;
    if (!same_invocation) {
      out.pairing_note = "independent: taken in different invocations";
    } else if (!baseline.interleaved) {
      out.pairing_note = "independent: the protocol did not interleave implementations";
    } else {
      out.pairing_note = fmt::format("independent: only {} rounds in common (fewer than {})",
                                     pairs.baseline.size(), kMinimumSamples);
    }
    const std::vector<double> bs = b.nanoseconds();
    const std::vector<double> cs = c.nanoseconds();
    out.baseline_samples = bs.size();
    out.candidate_samples = cs.size();
    out.medians = stats::bootstrap_independent(bs, cs, stream);
    out.noise_floor = stats::independent_noise_floor(bs, cs);
  }

  const double base = out.medians.baseline_median;
  out.relative_effect = out.medians.difference.estimate / base;
  out.relative_low = out.medians.difference.low / base;
  out.relative_high = out.medians.difference.high / base;
  // Both runs share the protocol (one cohort); the larger is the safe reading
  // should they not.
  out.minimum_effect = std::max(baseline.minimum_effect, candidate.minimum_effect);
  out.threshold = std::max(out.minimum_effect, out.noise_floor);

  if (std::min(out.baseline_samples, out.candidate_samples) < kMinimumSamples) {
    out.verdict = Verdict::shared;
    out.explanation = fmt::format("too few samples ({} and {}) for a verdict; at least {} needed",
                                  out.baseline_samples, out.candidate_samples, kMinimumSamples);
  } else if (!out.significant()) {
    out.verdict = Verdict::shared;
    out.explanation = "the interval of the difference includes zero";
  } else if (std::fabs(out.relative_effect) <= out.threshold) {
    out.verdict = Verdict::shared;
    out.explanation =
        fmt::format("the effect {} does not exceed the threshold", percent(std::fabs(out.relative_effect)));
  } else {
    out.verdict = out.relative_effect < 0 ? Verdict::faster : Verdict::slower;
    out.explanation = fmt::format("the interval excludes zero and the effect {} exceeds the threshold",
                                  percent(std::fabs(out.relative_effect)));
  }
  return out;
}

} // namespace kibench::compare
