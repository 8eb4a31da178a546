// What `kibench run` is doing now, reported as it happens: which workload
// of how many, which implementation, in which phase, and while sampling how
// far its stopping rule has come and how long the timing still needs. The
// harness fills the sampling figures (time_left.hpp estimates the rest),
// the session the workload and the phases around timing; the CLI prints it
// (lib/run/progress_line.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace kibench {

enum class Phase {
  oracle,    // the oracle's answer for the workload
  check,     // one implementation checked against it
  warmup,    // one implementation's untimed invocations
  sampling,  // a sample was taken
  lane_done, // one implementation's own stopping rule was met (or it hit a cap)
  sustained, // one implementation runs back to back for the sustained phase
};

struct Progress {
  Phase phase = Phase::sampling;
  std::size_t workload_index = 0; // 0-based, of workload_count
  std::size_t workload_count = 1;
  std::string workload;
  std::string implementation;

  // Sampling and lane_done: the implementation's state.
  std::size_t sample = 0; // samples taken by this implementation so far
  std::size_t round = 0;
  // The samples its stopping rule is now expected to take in all (at most
  // max_samples): time_left.hpp's samples_needed.
  std::size_t samples_expected = 0;
  std::size_t max_samples = 0;
  double noise = std::numeric_limits<double>::infinity(); // the median's relative standard error now
  double noise_target = 0.0;                              // --max-noise
  std::string stop_reason; // lane_done: "noise_target", "max_samples" or "timeout"
  // The samples it had when its own rule was met (0: not yet). With shared
  // rounds it samples on after that, in the rounds the others still need.
  std::size_t rule_met_at = 0;

  double elapsed_s = 0.0; // since this workload's timing began
  // The timing of this workload still ahead (sampling and the sustained
  // phase), from every implementation's stopping rule; nullopt outside
  // timing.
  std::optional<double> estimated_left_s;
};

using ProgressCallback = std::function<void(const Progress &)>;

} // namespace kibench
