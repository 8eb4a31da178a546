// The sampling flags `kibench run` and `kibench reproduce` share: the cache
// state, warm-up, the stopping rule, the power state and the sustained
// phase. Kept as text and read by flag_values.hpp, which refuses what
// CLI11's conversions let through ("-1" wraps as a count, "nan" is a double).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "lib/harness/power_state.hpp"
#include "lib/harness/protocol_settings.hpp"

namespace kibench::cli {

struct SamplingFlags {
  bool hot = false;
  std::string min_samples = "10";
  std::string max_samples = "1000";
  std::string min_time = "0.5";
  std::string max_noise = "0.005";
  std::string timeout = "60";
  std::string warmup = "3";
  std::string sustained = "1";
  std::string sustained_rounds = std::to_string(kDefaultSustainedRounds);
  std::string power_state{to_string(kDefaultPowerState)};
};

void add_sampling_options(CLI::App &command, SamplingFlags &flags);

// Every value in its range (setting_ranges.hpp; docs/guide.md lists them),
// into `s`; an InputError naming the flag otherwise.
void read_sampling_flags(const SamplingFlags &flags, ProtocolSettings &s);

} // namespace kibench::cli
