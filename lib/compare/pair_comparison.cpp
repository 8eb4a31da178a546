#include "lib/compare/pair_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "lib/enum_names.hpp"
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

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The median of a reading (clock or power) over a run's samples, all of
// them or only those of `rounds`; nullopt where no sample has it.
template <class Reading>
std::optional<double> median_reading(const RawSeries &series, Reading reading,
                                     const std::set<std::size_t> *rounds = nullptr) {
  std::vector<double> values;
  for (const Sample &s : series.samples)
    if (const std::optional<double> v = reading(s); v && (rounds == nullptr || rounds->contains(s.round)))
      values.push_back(*v);
  if (values.empty()) return std::nullopt;
  return median_of(std::move(values));
}

// "eager 1875 MHz in the shared rounds, 1480 overall" for clocks or power.
std::string state_of(const ComparedRun &run, const std::set<std::size_t> &shared, const char *unit,
                     std::optional<double> (*reading)(const Sample &)) {
  const auto in_shared = median_reading(*run.raw, reading, &shared);
  const auto overall = median_reading(*run.raw, reading);
  if (!in_shared || !overall) return {};
  return fmt::format("{} {:.0f} {} in the shared rounds, {:.0f} overall", run.id, *in_shared, unit, *overall);
}

std::optional<double> clock_of(const Sample &s) {
  return s.clock_mhz;
}
std::optional<double> power_of(const Sample &s) {
  return s.power_w;
}

// The paired speedup beside the ratio of the medians over all samples, and
// the caveat when they disagree by more than the noise: the threshold of
// the verdict, or the paired interval's half-width where that is wider.
void check_against_all_samples(const ComparedRun &baseline, const ComparedRun &candidate,
                               PairComparison &out) {
  const double all = median_of(baseline.raw->nanoseconds()) / median_of(candidate.raw->nanoseconds());
  out.all_samples_speedup = all;
  const stats::Interval &paired = out.medians.speedup;
  const double gap = paired.estimate / all - 1.0;
  const double half_width = (paired.high - paired.low) / (2.0 * paired.estimate);
  const double noise = std::max(out.threshold, half_width);
  if (std::fabs(gap) <= noise) return;
  std::set<std::size_t> shared;
  {
    std::set<std::size_t> baseline_rounds;
    for (const Sample &s : baseline.raw->samples) baseline_rounds.insert(s.round);
    for (const Sample &s : candidate.raw->samples)
      if (baseline_rounds.contains(s.round)) shared.insert(s.round);
  }
  out.state_caveat = fmt::format(
      "the paired speedup {:.3f}× ({} shared rounds) and the ratio of the medians over all samples {:.3f}× "
      "({} and {} samples) differ by {}, more than the noise ({}): the shared rounds were not typical of "
      "both runs",
      paired.estimate, shared.size(), all, baseline.raw->samples.size(), candidate.raw->samples.size(),
      percent(std::fabs(gap)), percent(noise));
  std::vector<std::string> states;
  for (const ComparedRun *run : {&baseline, &candidate}) {
    if (auto clock = state_of(*run, shared, "MHz", clock_of); !clock.empty()) states.push_back(clock);
    if (auto power = state_of(*run, shared, "W", power_of); !power.empty()) states.push_back(power);
  }
  if (!states.empty())
    out.state_caveat += fmt::format("; median SM clock and board power: {}", fmt::join(states, "; "));
}

} // namespace

std::string_view to_string(Pairing pairing) {
  return pairing == Pairing::paired ? "paired" : "independent";
}

std::string_view to_string(Verdict verdict) {
  static constexpr EnumName<Verdict> kNames[] = {
      {Verdict::faster, "faster"}, {Verdict::slower, "slower"}, {Verdict::shared, "shared"}};
  return name_in(kNames, verdict, "shared");
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
  if (out.pairing == Pairing::paired) check_against_all_samples(baseline, candidate, out);

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
