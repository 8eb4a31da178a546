#include "lib/run/trusted_samples.hpp"

#include <fmt/format.h>

#include "lib/correctness/correctness.hpp"
#include "lib/worker/remote_implementation.hpp"

namespace kibench {

namespace {

std::string describe(std::optional<std::size_t> timed_sample) {
  return timed_sample ? fmt::format("timed sample {}", *timed_sample + 1)
                      : std::string("a warm-up invocation");
}

} // namespace

std::string input_write_reason(const std::string &changed, const std::string &when) {
  return fmt::format("wrote into the shared input {} during {}: implementations must not change their inputs "
                     "(kibench restored them for the lanes after it)",
                     changed, when);
}

TrustedSamples::TrustedSamples(const Backend &backend, InputSet &inputs, InputGuard &input_guard,
                               TruthFor truth_for, Pass pass, InputRotation rotation)
    : backend_(backend), inputs_(inputs), truth_for_(std::move(truth_for)), pass_(pass), input_guard_(input_guard),
      rotation_(rotation) {
  const OutputView &truth = truth_for_(0);
  const std::int64_t elements =
      truth.grad_student_input.count + truth.grad_student_weight.count + truth.grad_student_bias.count;
  every_sample_ = elements < kCheapOutputElements;
}

void TrustedSamples::before_invocation(Implementation &impl, std::optional<std::size_t> timed_sample) {
  auto *own = dynamic_cast<worker::OwnInputs *>(&impl);
  if (own == nullptr || rotation_ == InputRotation::off) return;
  // Warm-ups on set 1; timed sample k (0-based) on set (k + 1) mod 2.
  const int variant = timed_sample ? static_cast<int>((*timed_sample + 1) % 2) : 1;
  own->use_input_variant(variant);
  lane_variant_[&impl] = variant;
  rotated_.insert(&impl);
}

std::optional<LaneFailure> TrustedSamples::after_invocation(Implementation &impl,
                                                            std::optional<std::size_t> timed_sample) {
  const std::string when = describe(timed_sample);
  ++counts_[&impl].inputs;
  if (auto failure = check_inputs(when)) return failure;
  if (!timed_sample) return std::nullopt;
  // Sample k (0-based) with probability 1/(k + 1): the first always, about
  // ln n + 1 of n in all, so a lane cannot tell which, and a long run of
  // cheap samples is not slowed by checks of large outputs.
  // The first sample on each input set always: a lane that returns what it
  // computed for the other set fails there.
  const bool chosen = every_sample_ || *timed_sample < 2 || entropy_() % (*timed_sample + 1) == 0;
  return chosen ? check_outputs(impl, when) : std::nullopt;
}

std::optional<LaneFailure> TrustedSamples::after_last(Implementation &impl) {
  return check_outputs(impl, "its last timed sample");
}

std::optional<LaneFailure> TrustedSamples::check_inputs(const std::string &when) {
  const auto changed = input_guard_.check_and_restore();
  if (!changed) return std::nullopt;
  return LaneFailure{RunStatus::runtime_error, input_write_reason(*changed, when)};
}

std::optional<LaneFailure> TrustedSamples::check_outputs(Implementation &impl, const std::string &when) {
  if (!impl.computes_loss() || already_incorrect_.contains(&impl)) return std::nullopt;
  ++counts_[&impl].outputs;
  const OutputView out = impl.outputs();
  const auto variant = lane_variant_.find(&impl);
  const OutputView &truth = truth_for_(variant == lane_variant_.end() ? 0 : variant->second);
  CorrectnessVerdict verdict =
      make_verdict(backend_.compare(out, truth, checks_gradients(pass_)), inputs_.workload().correctness);
  if (verdict.passed) return std::nullopt;
  return LaneFailure{RunStatus::incorrect_numerical,
                     fmt::format("the outputs of {} fail the check: {}", when, verdict.summary)};
}

std::string TrustedSamples::checked(const Implementation &impl) const {
  const auto it = counts_.find(&impl);
  const Counts c = it == counts_.end() ? Counts{} : it->second;
  return fmt::format("{} timed invocations' outputs and the inputs after {} invocations", c.outputs,
                     c.inputs);
}

} // namespace kibench
