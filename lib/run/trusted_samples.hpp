// kibench's SampleGuard (lib/harness/sample_guard.hpp): what the harness
// checks between the invocations it times, so that no lane's word is taken.
//
//   - Inputs (input_guard.hpp), after each invocation, warm-ups included.
//     A lane that changed one is failed, naming the tensor, the copy and
//     the invocation; the inputs are generated again in place before any
//     other lane runs, so the lanes after it are not affected.
//   - Outputs. The outputs of timed invocations are compared with the
//     oracle's under the workload's policy: every sample where they are
//     small (under 1 M elements), else sample k (0-based) with
//     probability 1/(k + 1) (drawn from the OS's entropy as each is taken,
//     so no lane can know which: the first always, about ln n + 1 of n),
//     and the lane's last timed sample. A lane whose timed outputs fail is
//     recorded incorrect_numerical with the invocation and the output named,
//     and never ranked.
//   - Rotated inputs. The check runs on the workload's input set 0; timed
//     sample k of a rotating lane runs on set (k + 1) mod 2 (warm-ups on
//     set 1), generated in place between invocations, untimed, and its
//     outputs are held to that set's oracle answer. The first sample of
//     each set is always compared, so a lane that returns what it computed
//     for other inputs (in prepare, or on its first call) fails. A lane in
//     a worker process rotates its own inputs (worker::OwnInputs); lanes in
//     kibench's process share one copy and keep set 0.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lib/harness/protocol_settings.hpp"
#include "lib/harness/sample_guard.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/run/backend.hpp"
#include "lib/run/input_guard.hpp"

namespace kibench {

// The failure reason of a lane that changed `changed` (InputGuard's words)
// during `when` ("timed sample 3", "its check").
std::string input_write_reason(const std::string &changed, const std::string &when);

class TrustedSamples final : public SampleGuard {
public:
  // The oracle's outputs for input set `variant` (made on first use).
  using TruthFor = std::function<const OutputView &(int variant)>;
  // `inputs` and `input_guard` must outlive it.
  TrustedSamples(const Backend &backend, InputSet &inputs, InputGuard &input_guard, TruthFor truth_for, Pass pass,
                 InputRotation rotation);

  void before_invocation(Implementation &impl, std::optional<std::size_t> timed_sample) override;
  std::optional<LaneFailure> after_invocation(Implementation &impl,
                                              std::optional<std::size_t> timed_sample) override;
  std::optional<LaneFailure> after_last(Implementation &impl) override;

  // Whether `impl` saw more than one input set.
  [[nodiscard]] bool rotated(const Implementation &impl) const { return rotated_.contains(&impl); }

  // An implementation that already failed its check is timed as it is
  // (recorded incorrect_numerical): its timed outputs are not compared, and
  // it is timed to the protocol's minimum of samples unless `time_failed`
  // (kibench run --time-failed) was given.
  void already_incorrect(const Implementation &impl) { already_incorrect_.insert(&impl); }
  void time_failed_lanes_fully(bool time_failed) { time_failed_ = time_failed; }
  [[nodiscard]] bool time_to_minimum(const Implementation &impl) const override {
    return !time_failed_ && already_incorrect_.contains(&impl);
  }

  // "5 timed invocations' outputs and 44 input fingerprints checked": what
  // was checked of `impl`'s invocations, for its run's labels.
  [[nodiscard]] std::string checked(const Implementation &impl) const;

  // Outputs with fewer elements than this are checked at every sample.
  static constexpr std::int64_t kCheapOutputElements = std::int64_t{1} << 20;

private:
  std::optional<LaneFailure> check_inputs(const std::string &when);
  std::optional<LaneFailure> check_outputs(Implementation &impl, const std::string &when);


  bool time_failed_ = false;
  const Backend &backend_;
  InputSet &inputs_;
  TruthFor truth_for_;
  Pass pass_;
  InputGuard &input_guard_;
  InputRotation rotation_;
  std::map<const Implementation *, int> lane_variant_; // the input set of its last invocation
  std::set<const Implementation *> rotated_;
  bool every_sample_ = false;
  std::random_device entropy_;
  struct Counts {
    std::size_t outputs = 0, inputs = 0;
  };
  std::map<const Implementation *, Counts> counts_;
  std::set<const Implementation *> already_incorrect_;
};

} // namespace kibench
