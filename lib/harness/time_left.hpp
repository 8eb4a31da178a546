// How much timing a workload still needs, from the state of every
// implementation's stopping rule (stopping_rule.hpp) rather than from the
// minimum sample count alone: the samples the noise target needs at the
// spread measured so far (n with 1.2533·spread/sqrt(n) <= --max-noise),
// the samples --min-time needs, --min-samples, each capped at
// --max-samples; each at the wall time a sample has taken (flush and launch
// included), each lane bounded by what is left of its own --timeout (the
// wall time of its own samples), plus the sustained phase still ahead. An
// estimate: it moves as the spread does.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "lib/harness/protocol_settings.hpp"

namespace kibench {

// One implementation's sampling so far.
struct LaneProgress {
  std::size_t samples = 0;
  double sampled_s = 0.0; // the samples' own times, summed (what --min-time counts)
  double wall_s = 0.0;    // wall time spent taking them (what --timeout counts)
  double relative_spread = std::numeric_limits<double>::infinity(); // 1.4826·MAD / median
  bool rule_met = false;    // its own rule said stop (or it failed): it wants no more
  bool at_cap = false;      // at its sample cap or time limit: it takes no more
  double sustained_s = 0.0; // the sustained phase still ahead of it
};

// The samples `lane`'s rule is now expected to take in all: what it has
// when its rule is met, else at least one more, at most max_samples.
std::size_t samples_needed(const LaneProgress &lane, const ProtocolSettings &settings);

// Seconds of timing still ahead; nullopt while no lane has taken a sample
// (nothing to scale by yet). With share_rounds every lane not at its cap
// samples as long as the neediest.
std::optional<double> time_left_s(const std::vector<LaneProgress> &lanes, const ProtocolSettings &settings);

} // namespace kibench
