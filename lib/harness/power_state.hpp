// The power state each timed sample starts from (`kibench run
// --power-state`). On a power-capped GPU a sample's clock depends on what
// ran just before it: a neighbour with low-power phases leaves headroom the
// next sample spends, a GEMM-bound one leaves the board at its cap
// (docs/protocol.md, "Pairing under the power limiter"). The setting makes
// that start the same for every sample:
//   as_is  - no conditioning: each sample starts where the last left it;
//   rested - before each sample, wait (bounded) until the SM clock and the
//            board power are back in the band read on the idle GPU at the
//            start of the run;
//   loaded - before each sample, a fixed burst of tensor-core work on the
//            sample's stream, so every sample starts at the cap.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kibench {

enum class PowerState { as_is, rested, loaded };

// What runs get without --power-state: today's behaviour, so runs stay
// comparable with earlier ones until measurements say which start makes
// paired and independent estimates agree (docs/protocol.md, "Which state
// is the default").
inline constexpr PowerState kDefaultPowerState = PowerState::as_is;

std::string_view to_string(PowerState state); // "as-is", "rested", "loaded"
std::optional<PowerState> power_state_from_string(std::string_view text);
// Every name power_state_from_string reads, as "a, b or c".
std::string power_state_names();

namespace power_state {

// rested: the longest wait before one sample. A bound keeps a board that
// does not return to its band (another process on it, a sensor that lags)
// from stalling the run: 50 samples of 3 lanes wait at most 38 s. A sample
// that reaches it starts anyway and is marked (restTimedOut), so how often
// the band was missed is in the record.
inline constexpr double kRestBoundS = 0.25;
// How often NVML is read while waiting: short next to the sensor's updates,
// long next to the cost of one reading (~10 us).
inline constexpr double kPollIntervalS = 0.002;
// The idle band: SM clock at least this fraction of the idle-start clock
// (boost moves in steps of ~15 MHz, under 1 % of an H200's 1980 MHz: 3 %
// leaves room for a few steps) ...
inline constexpr double kRestClockFraction = 0.97;
// ... and board power at most this far above the idle-start power: room
// for the scatter of instantaneous readings on an idle board, small next
// to the hundreds of watts a loaded one draws.
inline constexpr double kRestPowerMarginW = 30.0;
// Readings of the idle GPU taken at the start, kPollIntervalS apart; their
// medians are the idle-start clock and power.
inline constexpr int kIdleReadings = 25;

// loaded: the preconditioning burst before each sample, in GPU time: of
// the order of one seed-workload sample (~30 ms on an H200), so the limiter
// has held the board at its cap for a sample's length before the timer
// starts, while the run grows by less than its samples' own time.
inline constexpr double kLoadS = 0.020;

} // namespace power_state

} // namespace kibench
