// A candidate against a baseline of the same cohort: the bootstrap interval
// of the difference of medians (paired by interleave round when both runs
// come from one interleaved invocation, independent otherwise), the speedup
// with its interval, and the verdict.
//
// Verdict (KernelIndex's ranking policy):
//   threshold = max(minimum effect of the protocol, measured noise floor)
//   faster / slower  when the interval of the difference excludes zero AND
//                    |relative effect| > threshold,
//   shared           otherwise (and always with fewer than kMinimumSamples).
// relative effect = (median_c - median_b) / median_b of the analysed samples.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "lib/compare/compared_run.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::compare {

// Fewer samples (or pairs) than this give no verdict: a percentile interval
// of a median from a handful of values is not worth a claim.
inline constexpr std::size_t kMinimumSamples = 5;

enum class Pairing { paired, independent };
enum class Verdict { faster, slower, shared };

std::string_view to_string(Pairing pairing);
std::string_view to_string(Verdict verdict);

struct PairComparison {
  Pairing pairing = Pairing::independent;
  std::string pairing_note; // "paired on 40 interleave rounds" or why not paired
  bool fixed_order = false; // paired, but the rounds sampled in one fixed order (protocol_terms.hpp)
  std::size_t baseline_samples = 0, candidate_samples = 0; // analysed (paired: both = the pairs)
  stats::MedianComparison medians;                         // difference (ns) and speedup, with intervals
  double relative_effect = 0.0;                            // difference / baseline median
  double relative_low = 0.0, relative_high = 0.0;          // the difference's interval, relative
  double minimum_effect = 0.0, noise_floor = 0.0, threshold = 0.0;
  Verdict verdict = Verdict::shared;
  std::string explanation; // why this verdict, in words
  // Paired only: the ratio of the two runs' medians over all their samples,
  // beside the paired speedup of the shared rounds. On a power-capped
  // board a run's neighbours set its clock, so the rounds both runs shared
  // need not be typical of either; when the two estimates differ by more
  // than the noise, state_caveat names both and each run's median SM clock
  // and board power in the shared rounds and overall (empty when they agree).
  std::optional<double> all_samples_speedup;
  std::string state_caveat;

  // The interval of the difference lies on one side of zero.
  [[nodiscard]] bool significant() const { return medians.difference.excludes(0.0); }
};

// Both runs must be rankable (status passed, raw samples). The bootstrap
// stream is derived from settings.seed and the two run digests, so a pair's
// result does not depend on what else is compared.
PairComparison compare_pair(const ComparedRun &baseline, const ComparedRun &candidate,
                            const stats::BootstrapSettings &settings);

} // namespace kibench::compare
