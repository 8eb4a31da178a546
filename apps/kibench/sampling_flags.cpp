#include "apps/kibench/sampling_flags.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "apps/kibench/flag_values.hpp"
#include "lib/error.hpp"
#include "lib/harness/setting_ranges.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::cli {

void add_sampling_options(CLI::App &command, SamplingFlags &flags) {
  namespace ranges = setting_ranges;
  command.add_flag("--hot", flags.hot, "Do not flush the GPU L2 before each sample");
  command
      .add_option("--warmup", flags.warmup,
                  fmt::format("Untimed invocations first (0 to {})", ranges::kMaxWarmupRuns))
      ->type_name("N")
      ->capture_default_str();
  command
      .add_option("--min-samples", flags.min_samples,
                  fmt::format("Samples before stopping is considered (1 to {})", ranges::kMaxSamples))
      ->type_name("N")
      ->capture_default_str();
  command
      .add_option(
          "--max-samples", flags.max_samples,
          fmt::format("Stop at this many samples (1 to {}; raised to --min-samples)", ranges::kMaxSamples))
      ->type_name("N")
      ->capture_default_str();
  command
      .add_option("--min-time", flags.min_time,
                  fmt::format("Seconds of samples before stopping (0 to {})", ranges::kMaxMinTimeS))
      ->type_name("SECONDS")
      ->capture_default_str();
  command
      .add_option("--max-noise", flags.max_noise,
                  fmt::format("Stop when the median's relative standard error is below: a fraction (0 to {}) "
                              "or a percentage (0.5%)",
                              ranges::kMaxNoise))
      ->type_name("NOISE")
      ->capture_default_str();
  command
      .add_option(
          "--timeout", flags.timeout,
          fmt::format("Stop sampling one implementation once its own samples (with their flush and check) "
                      "have taken this many seconds of wall time (above 0, at most {})",
                      ranges::kMaxTimeoutS))
      ->type_name("SECONDS")
      ->capture_default_str();
  command
      .add_option("--power-state", flags.power_state,
                  fmt::format("The state each timed GPU sample starts from: as-is (as the last left it), "
                              "rested (wait, at most {} s, until SM clock and board power are back at their "
                              "idle readings) or loaded ({} s of tensor-core load first); docs/protocol.md",
                              json::format_number(power_state::kRestBoundS),
                              json::format_number(power_state::kLoadS)))
      ->type_name("as-is|rested|loaded")
      ->capture_default_str();
  command
      .add_option(
          "--sustained", flags.sustained,
          fmt::format("Seconds each GPU implementation then runs back to back while the board's energy "
                      "is read (0 to {}; 0: skip)",
                      ranges::kMaxSustainedS))
      ->type_name("SECONDS")
      ->capture_default_str();
  command
      .add_option("--sustained-rounds", flags.sustained_rounds,
                  fmt::format("Rounds of the sustained phase: the implementations take turns, --sustained "
                              "seconds each a round, and report their medians over the rounds (1 to {})",
                              ranges::kMaxSustainedRounds))
      ->type_name("N")
      ->capture_default_str();
}

void read_sampling_flags(const SamplingFlags &flags, ProtocolSettings &s) {
  namespace ranges = setting_ranges;
  s.cold = !flags.hot;
  s.warmup_runs = count_flag("--warmup", flags.warmup, 0, ranges::kMaxWarmupRuns);
  s.min_samples = count_flag("--min-samples", flags.min_samples, 1, ranges::kMaxSamples);
  // A maximum below the minimum is raised to it: `--min-samples 2000` alone
  // asks for 2000 samples.
  s.max_samples = std::max<std::size_t>(
      count_flag("--max-samples", flags.max_samples, 1, ranges::kMaxSamples), s.min_samples);
  s.min_time_s = number_flag("--min-time", flags.min_time, 0.0, ranges::kMaxMinTimeS, true, "seconds");
  s.max_noise = fraction_flag("--max-noise", flags.max_noise, ranges::kMaxNoise);
  s.timeout_s = number_flag("--timeout", flags.timeout, 0.0, ranges::kMaxTimeoutS, false, "seconds");
  s.power_state =
      choice_flag("--power-state", flags.power_state, power_state_from_string, power_state_names());
  s.sustained_time_s =
      number_flag("--sustained", flags.sustained, 0.0, ranges::kMaxSustainedS, true, "seconds");
  s.sustained_rounds = count_flag("--sustained-rounds", flags.sustained_rounds, 1, ranges::kMaxSustainedRounds);
}

} // namespace kibench::cli
