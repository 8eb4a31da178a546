// The timing loop: warm-up, then rounds in which every unfinished
// implementation takes one sample (interleaved, so a later compare can pair
// sample k of A with sample k of B: both saw the same machine state), in
// an order that changes from round to round (interleave_order.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/harness/power_conditioner.hpp"
#include "lib/harness/progress.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/harness/sample_guard.hpp"
#include "lib/harness/sustained.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/implementation/implementation_failure.hpp"

namespace kibench {

struct Sample {
  double ns = 0.0;
  std::optional<double> clock_mhz = std::nullopt;
  std::size_t round = 0; // interleave index: the round this sample was taken in
  bool throttled = false;
  std::optional<double> power_w =
      std::nullopt; // board power when the sample ended, where the device reports it
  // --power-state rested: the wait for the idle band before the sample.
  std::optional<RestOutcome> rest = std::nullopt;
};

struct Measurement {
  std::string implementation;
  std::vector<Sample> samples;
  std::string stop_reason;
  // Wall seconds its samples took, each with its flush, untimed work
  // (another input set, for a rotating lane) and check: what --timeout
  // counts.
  double sampling_wall_s = 0.0;
  std::string timer;
  std::optional<SustainedMeasurement> sustained; // the phase after sampling, where it ran
  // Set when the implementation threw during a warm-up or a sample: it
  // took no further samples, and its samples are not a measurement.
  std::optional<LaneFailure> failure;
};

// A lane whose warm-up or sample throws stops there (Measurement::failure);
// the others go on. `progress` hears of each warm-up, sample, lane whose
// rule is met and sustained phase (Progress's workload fields left to the
// caller). `conditioner` brings the power state settings.power_state names
// before every timed sample (not the warm-ups); it is required unless that
// state is as-is (std::logic_error otherwise). `guard`, where given, runs
// after every invocation and after each lane's last (sample_guard.hpp).
std::vector<Measurement> measure(const std::vector<Implementation *> &implementations,
                                 const ProtocolSettings &settings, const ProgressCallback &progress = {},
                                 PowerConditioner *conditioner = nullptr, SampleGuard *guard = nullptr);

} // namespace kibench
