#include "lib/harness/protocol_settings.hpp"

#include <fmt/core.h>

#include "lib/enum_names.hpp"
#include "lib/json/canonical.hpp"

namespace kibench {

std::string ProtocolSettings::describe() const {
  const std::string cache = cold ? "the GPU L2 cache flushed (a write of twice its size) before every sample"
                                 : "caches left warm between samples";
  return fmt::format(
             "Timed: the {} pass, one invocation per sample, with {} ({}). {} untimed warm-up invocations "
             "first. "
             "Sampling stops when the median's relative standard error (1.2533·1.4826·MAD/median/sqrt(n)) is "
             "at "
             "most {} "
             "after at least {} samples and {} s of sampled time, or at {} samples, or after {} s. Samples "
             "of "
             "several implementations are interleaved round by round: {}. Samples whose SM clock is under {} "
             "of "
             "the highest clock seen are flagged as throttled and kept. Every output is checked against the "
             "fp64 "
             "oracle before timing; inputs are generated once, deterministically (Philox4x32-10). A "
             "difference "
             "smaller than {} relative is not called a win.",
             to_string(pass), timer, cache, warmup_runs, json::format_number(max_noise), min_samples,
             json::format_number(min_time_s), max_samples, json::format_number(timeout_s),
             !interleave ? "no"
             // Shared rounds add a sentence; the order's is shorter then, so
             // the notes stay within KernelIndex's 1000 characters. Without
             // them it is the sentence of every earlier run, whose protocol
             // (and digest) a run with the same settings still shares.
             : share_rounds
                 ? "yes, in a Williams-design order that changes each round (over n rounds, 2n for odd n, "
                   "each takes every place and follows every other equally often)"
                 : "yes, in a Williams-design order that changes each round (over a cycle of n "
                   "rounds, 2n for an odd number n of implementations, each takes every place in a "
                   "round and follows every other one equally often)",
             json::format_number(throttle_fraction), json::format_number(minimum_effect)) +
         (interleave && share_rounds ? std::string(kShareRoundsSentence) : "") +
         describe_power_state(power_state);
}

std::string ProtocolSettings::describe_power_state(PowerState state) {
  namespace ps = power_state;
  switch (state) {
  case PowerState::rested:
    return fmt::format(" Samples start rested (wait <= {} s).", json::format_number(ps::kRestBoundS));
  case PowerState::loaded:
    return fmt::format(" Samples start loaded ({} s load first).", json::format_number(ps::kLoadS));
  case PowerState::as_is:
    break;
  }
  return {};
}

std::string ProtocolSettings::describe_power_state_method() const {
  namespace ps = power_state;
  switch (power_state) {
  case PowerState::rested:
    return fmt::format(
        "Rested: before each timed GPU sample, after the cache flush and before the timer starts, the "
        "harness "
        "waits for the stream, then reads NVML every {} s until the SM clock is at least {} of and the board "
        "power at most {} W above their medians over {} readings of the idle GPU at the start of the run, "
        "for "
        "at most {} s a sample.",
        json::format_number(ps::kPollIntervalS), json::format_number(ps::kRestClockFraction),
        json::format_number(ps::kRestPowerMarginW), ps::kIdleReadings, json::format_number(ps::kRestBoundS));
  case PowerState::loaded:
    return fmt::format(
        "Loaded: before each timed GPU sample, after the cache flush, {} s (by the GPU's global "
        "timer) of bf16 tensor-core MMAs on every SM is enqueued on the sample's stream ahead of "
        "the timer's start event.",
        json::format_number(ps::kLoadS));
  case PowerState::as_is:
    break;
  }
  return {};
}

std::string ProtocolSettings::describe_sustained() const {
  if (!(sustained_time_s > 0.0)) return {};
  if (sustained_rounds <= 1)
    return fmt::format(
        "After sampling, each GPU implementation runs back to back, warm (no cache flush, no host sync), for "
        "~{} s after a quarter of that untimed, while a background thread reads the board's cumulative energy "
        "counter about once a millisecond. Power = the counter's rise from its first to its last step inside "
        "that window / the host time between those steps; sustained latency = the implementation's timer over "
        "all timed invocations / their count; energy per invocation = power x sustained latency.",
        json::format_number(sustained_time_s));
  return fmt::format(
      "After sampling, the GPU implementations take turns running back to back, warm (no cache flush, no host "
      "sync), in {} rounds in the samples' rotated order, each turn ~{} s after a quarter of that untimed, "
      "while a background thread reads the board's cumulative energy counter about once a millisecond. In a "
      "turn, power = the counter's rise from its first to its last step inside the timed window / the host "
      "time between those steps; sustained latency = the implementation's timer over all timed invocations / "
      "their count; energy per invocation = power x sustained latency. Reported: the median of each over the "
      "implementation's turns.",
      sustained_rounds, json::format_number(sustained_time_s));
}

std::string ProtocolSettings::method() const {
  const std::string single = fmt::format("{}_{}_{}", timer, cold ? "cold" : "hot", to_string(pass));
  return gpus > 1 ? fmt::format("{}_gpus{}", single, gpus) : single;
}

std::string ProtocolSettings::describe_gpus() const {
  if (gpus <= 1) return {};
  return fmt::format(
      "The run holds GPUs 0-{}: single-GPU implementations run on GPU 0; for one that spans the GPUs, each "
      "sample's cache flush runs on every GPU, the host then waits until every GPU's stream is idle (a "
      "barrier), CUDA events are recorded on each GPU's stream around the invocation, and the sample is the "
      "slowest GPU's time between its events; its SM clock is the lowest of the GPUs' and its power the sum "
      "of their boards'.",
      gpus - 1);
}

std::string ProtocolSettings::family() const {
  return "kibench_" + method();
}

namespace {
constexpr EnumName<InputRotation> kInputRotationNames[] = {{InputRotation::automatic, "auto"},
                                                           {InputRotation::off, "off"}};
} // namespace

std::string_view to_string(InputRotation rotation) {
  return name_in(kInputRotationNames, rotation, "auto");
}

std::optional<InputRotation> input_rotation_from_string(std::string_view text) {
  return value_named(kInputRotationNames, text);
}

std::string input_rotation_names() {
  return names_listed(kInputRotationNames);
}

} // namespace kibench
