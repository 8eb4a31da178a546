// What the harness checks between invocations, so that nothing it times is
// taken on trust (lib/run/trusted_samples.hpp is kibench's): the shared
// inputs are as generated after every invocation, and the outputs of timed
// invocations are right. The checks run between samples, outside the
// timer. A failure ends that lane alone: its samples are dropped and the
// failure is recorded with its named reason.
#pragma once

#include <cstddef>
#include <optional>

#include "lib/implementation/implementation.hpp"
#include "lib/implementation/implementation_failure.hpp"

namespace kibench {

class SampleGuard {
public:
  virtual ~SampleGuard() = default;
  // Before one invocation of `impl` (as after_invocation numbers them),
  // untimed, before the cache flush: kibench's rotates the inputs here.
  // An exception fails the lane.
  virtual void before_invocation(Implementation & /*impl*/, std::optional<std::size_t> /*timed_sample*/) {}
  // After one invocation of `impl`: a warm-up (`timed_sample` nullopt) or
  // timed sample number `*timed_sample` (0-based, per lane).
  virtual std::optional<LaneFailure> after_invocation(Implementation &impl,
                                                      std::optional<std::size_t> timed_sample) = 0;
  // After the lane's last timed sample, before its sustained phase (which
  // runs back to back, without before_sample()).
  virtual std::optional<LaneFailure> after_last(Implementation &impl) = 0;
  // Whether `impl` is timed only to the protocol's minimum of samples (a
  // lane that failed its check: its time is no result's, and more samples
  // would not make it one). It stops with the reason "check_failed".
  [[nodiscard]] virtual bool time_to_minimum(const Implementation & /*impl*/) const { return false; }
};

} // namespace kibench
