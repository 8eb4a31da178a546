// Every knob of the measurement, recorded in the BenchmarkProtocol so a
// reader knows exactly how a number was taken.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "lib/harness/power_state.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench {

// `kibench run`'s default for share_rounds: on, since the paired speedups
// and the medians beside them then agree (docs/protocol.md, "Pairing under
// the power limiter").
inline constexpr bool kShareRoundsByDefault = true;

// The protocol's sentence for share_rounds (compare reads it back).
inline constexpr std::string_view kShareRoundsSentence =
    " Every implementation samples each round until the last one's rule is met.";

// Rounds of the sustained phase: three, so that a turn at the board's
// hottest moment (the last implementation of a round, after the others'
// back-to-back work) moves no implementation's median, no implementation
// always takes that place, and the turns' spread shows how steady each
// figure is within the run (on an H100 at the seed: 0.1-1.1 %).
inline constexpr std::size_t kDefaultSustainedRounds = 3;

// Whether lanes see more than one of the workload's input sets while timed
// (docs/protocol.md, "What the harness checks"): `automatic`, every lane
// in a worker process (it holds inputs of its own); `off`, none.
enum class InputRotation { automatic, off };
std::string_view to_string(InputRotation rotation);
std::optional<InputRotation> input_rotation_from_string(std::string_view text);
// Every name input_rotation_from_string reads, as "a, b or c".
std::string input_rotation_names();

struct ProtocolSettings {
  Pass pass = Pass::full;
  bool cold = true;               // flush the L2 before each sample (GPU)
  std::size_t warmup_runs = 3;    // untimed invocations before sampling
  std::size_t min_samples = 10;   // never stop before this many
  std::size_t max_samples = 1000; // always stop at this many
  double min_time_s = 0.5;        // never stop before this much sampled time
  double max_noise = 0.005;       // stop once the median's relative standard error is below this
  double timeout_s = 60.0;        // always stop after this much wall time per implementation
  bool interleave = true;         // A B C A B C ... rounds across implementations
  // Interleaved only: every implementation samples in every round until the
  // last one's stopping rule is met (its own sample cap or time limit
  // aside), so a paired comparison and the medians beside it come from the
  // same rounds (docs/protocol.md: on the H200 the two estimates differed
  // by 12-13 % without it, by under 0.1 % with it). Off here, where a
  // program builds its own protocol; `kibench run` turns it on by default
  // (kShareRoundsByDefault) and --own-rounds turns it off.
  bool share_rounds = false;
  // The state each timed GPU sample starts from (power_state.hpp): stated
  // in describe() unless as_is, so as-is runs keep the digest they had.
  PowerState power_state = kDefaultPowerState;
  double throttle_fraction = 0.95; // flag samples whose SM clock is below this × the max observed
  double minimum_effect = 0.01;    // smallest relative difference compare calls a win
  std::string timer;               // "cuda_events" or "steady_clock"
  // After sampling, each implementation with a PowerMonitor runs back to
  // back for about this long (plus a quarter untimed first) while the
  // board's energy is read (harness/sustained.hpp); 0: no such phase.
  // That is one round; the implementations take turns, sustained_rounds
  // rounds in the samples' rotated order, and the medians over each one's
  // rounds are its figures.
  double sustained_time_s = 1.0;
  std::size_t sustained_rounds = kDefaultSustainedRounds;
  // kibench locked the SM clock for the run (--lock-clocks, where NVML
  // allowed it): the protocol's devicePolicy.clocksLocked.
  bool clocks_locked = false;
  // The GPUs the run holds (--gpus): above 1, samples of an implementation
  // that spans them start after a barrier over every GPU and are the
  // slowest GPU's event time; named in method() (so in the family and the
  // digest) and in the protocol's synchronization. 1 changes nothing.
  int gpus = 1;
  // A workload whose lanes did not fit the device together was timed in
  // groups (lib/run/memory_plan.hpp): the groups, in the protocol's
  // metadata.description; "" when every lane was timed in one.
  std::string timing_groups;
  // --rotate-inputs, and what rotated in this workload's run, for the
  // protocol's metadata.description ("" when no lane saw a second set).
  InputRotation input_rotation = InputRotation::automatic;
  std::string rotation;

  // A stable, human-readable statement of the sampling above (goes into the
  // protocol's comparability notes, and so into its digest).
  [[nodiscard]] std::string describe() const;
  // How the sustained phase measured power and energy, or "" when it is
  // off. It runs after every sample is taken and changes none of them, so
  // it goes into the protocol's metadata, outside its identity: runs with
  // and without it stay in one cohort.
  [[nodiscard]] std::string describe_sustained() const;
  // The sentence describe() appends for `state` ("" for as_is): the state,
  // with the wait's bound or the load's length. Short, since the notes'
  // schema allows 1000 characters. compare reads it back
  // (lib/compare/protocol_terms.hpp).
  [[nodiscard]] static std::string describe_power_state(PowerState state);
  // How the power state is brought about, in full, or "" for as_is: for
  // the protocol's metadata.description (the state and its bound or length
  // are in the notes, hence the digest).
  [[nodiscard]] std::string describe_power_state_method() const;
  // e.g. "cuda_events_cold_full": the timer, the cache state and the pass;
  // "cuda_events_cold_full_gpus8" for a run over 8 GPUs.
  [[nodiscard]] std::string method() const;
  // How a multi-GPU run's samples are taken, or "" for one GPU: for the
  // protocol's metadata.description.
  [[nodiscard]] std::string describe_gpus() const;
  // "kibench_" + method(): runs are comparable only within one.
  [[nodiscard]] std::string family() const;
};

} // namespace kibench
