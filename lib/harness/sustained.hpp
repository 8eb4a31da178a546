// The sustained phase, after the timed samples: an implementation that can
// read its device's energy runs back to back, warm (no cache flush, no host
// sync between invocations), as a training loop runs it, while a
// PowerMonitor reads the board's energy counter. The cold samples say how
// long one pass takes on an idle board; this says what a pass costs in
// joules and how fast passes follow each other once the board sits at its
// power limit, which is where GEMM-bound work spends its life.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lib/harness/protocol_settings.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench {

// Board power between two steps of a cumulative energy counter.
struct PowerSummary {
  double power_w = 0.0;
  double window_s = 0.0;              // host time between the two steps
  std::size_t steps = 0;              // counter steps inside the busy interval
  std::optional<double> sm_clock_mhz; // mean of the readings between the steps
};

// The counter advances in steps (the sensor's update rate, often coarser
// than the reads), so power is measured from the first to the last step
// observed inside [busy_begin_s, busy_end_s], the host-time interval in
// which the device is known to be running the work: energy between steps
// over the time between them. nullopt with fewer than two steps there.
std::optional<PowerSummary> summarize_power(const std::vector<PowerReading> &readings, double busy_begin_s,
                                            double busy_end_s);

// One window of the phase: an implementation back to back, after its
// untimed warm-up.
struct SustainedRound {
  std::size_t warmup_invocations = 0;
  std::size_t invocations = 0;       // timed, back to back
  double latency_ns = 0.0;           // the implementation's timer over all of them, per invocation
  std::optional<PowerSummary> power; // nullopt: the counter did not step twice in the window
  // power × latency: the energy of one invocation, in joules.
  [[nodiscard]] std::optional<double> energy_j() const;
};

// The phase for one implementation: its rounds, in the order they ran, and
// the figures over them. The rounds of the implementations of a run take
// turns (harness.cpp, in the samples' rotated order), so each meets the
// board at each stage of its heating; the medians over the rounds are what
// is reported, so the implementation that runs last in one round, on the
// hottest board, is not always the same one.
struct SustainedMeasurement {
  std::vector<SustainedRound> rounds;
  std::string monitor; // PowerMonitor::name()
  // Over the rounds: invocations summed; latency the median of the rounds'
  // latencies; power the median of the rounds' powers, its window and steps
  // summed and the SM clock the mean of the rounds' (rounds without power
  // left out); energy the median of the rounds' energies per invocation
  // (nullopt where no round has power).
  std::size_t warmup_invocations = 0;
  std::size_t invocations = 0;
  double latency_ns = 0.0;
  std::optional<PowerSummary> power;
  std::optional<double> energy_j;
};

// The measurement over `rounds` (at least one), with their figures combined
// as SustainedMeasurement says.
SustainedMeasurement combine_sustained_rounds(std::vector<SustainedRound> rounds, std::string monitor);

// The rounds of several measurements of one implementation, in order, combined.
SustainedMeasurement merge_sustained(const std::vector<SustainedMeasurement> &measurements);

// Invocations a round runs: about settings.sustained_time_s of them at
// `median_ns` each, at least 3 and at most 10^4 (and a quarter as many
// untimed first, so the board settles at its sustained clock and power).
std::size_t sustained_invocations(const ProtocolSettings &settings, double median_ns);

// An implementation that runs its sustained phase where it lives, with the
// timer and power monitor of that process, and hands back the figures: a
// lane in a worker process (lib/worker/remote_implementation.cpp), whose
// back-to-back invocations must not wait on kibench's requests one by one.
class RemoteSustained {
public:
  virtual ~RemoteSustained() = default;
  [[nodiscard]] virtual std::optional<SustainedMeasurement>
  measure_sustained_there(const ProtocolSettings &settings, double median_ns) = 0;
};

// One round of the phase (a measurement of one round): about
// settings.sustained_time_s timed. nullopt when the phase is off
// (sustained_time_s == 0), for the backward pass (its untimed forward would
// run inside the window), or when the implementation's device has no
// PowerMonitor. A RemoteSustained implementation measures it there; the
// others on `device`, which they run on (Implementation::open_device()).
std::optional<SustainedMeasurement> measure_sustained(Implementation &impl, Device &device,
                                                      const ProtocolSettings &settings, double median_ns);

} // namespace kibench
