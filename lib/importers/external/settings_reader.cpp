#include "lib/importers/external/settings_reader.hpp"

#include <fmt/format.h>

#include "lib/harness/setting_ranges.hpp"
#include "lib/importers/external/value_rules.hpp"

namespace kibench::importers::external {

using detail::Field;
using detail::ObjectReader;

ProtocolSettings read_protocol_settings(const Field &field) {
  const ObjectReader reader(field,
                            {"pass", "cold", "warmupRuns", "minSamples", "maxSamples", "minTimeS", "maxNoise",
                             "timeoutS", "interleave", "throttleFraction", "minimumEffect", "timer"});
  ProtocolSettings s;
  const Field pass = reader.required("pass");
  const auto parsed = pass_from_string(pass.string());
  if (!parsed) pass.fail(fmt::format("{:?} is not forward, backward or full", pass.string()));
  s.pass = *parsed;
  s.cold = reader.required("cold").boolean();
  // The ranges of `kibench run`'s flags (setting_ranges.hpp): a protocol
  // run would refuse is not recorded as one another harness followed.
  namespace ranges = setting_ranges;
  s.warmup_runs = static_cast<std::size_t>(
      reader.required("warmupRuns").integer(0, static_cast<std::int64_t>(ranges::kMaxWarmupRuns)));
  s.min_samples = static_cast<std::size_t>(
      reader.required("minSamples").integer(1, static_cast<std::int64_t>(ranges::kMaxSamples)));
  const Field max_samples = reader.required("maxSamples");
  s.max_samples =
      static_cast<std::size_t>(max_samples.integer(1, static_cast<std::int64_t>(ranges::kMaxSamples)));
  if (s.max_samples < s.min_samples)
    max_samples.fail(fmt::format("{} is less than minSamples ({})", s.max_samples, s.min_samples));
  s.min_time_s = duration(reader.required("minTimeS"), setting_ranges::kMaxMinTimeS, "s", true);
  const Field max_noise = reader.required("maxNoise");
  s.max_noise = nonnegative_number(max_noise);
  if (s.max_noise > ranges::kMaxNoise)
    max_noise.fail(fmt::format("{} is above the {} a protocol may take (a fraction, not a percentage)",
                               s.max_noise, ranges::kMaxNoise));
  s.timeout_s = duration(reader.required("timeoutS"), setting_ranges::kMaxTimeoutS, "s");
  s.interleave = reader.required("interleave").boolean();
  const Field throttle = reader.required("throttleFraction");
  s.throttle_fraction = positive_number(throttle);
  if (s.throttle_fraction > 1.0)
    throttle.fail(fmt::format("expected a fraction in (0, 1], got {}", s.throttle_fraction));
  s.minimum_effect = nonnegative_number(reader.required("minimumEffect"));
  s.sustained_time_s = 0.0; // an external harness's result has no sustained phase
  const Field timer = reader.required("timer");
  s.timer = timer.string();
  // The two timers kibench's harness has; the protocol's synchronization
  // statement follows from the timer.
  if (s.timer != "cuda_events" && s.timer != "steady_clock")
    timer.fail(fmt::format("{:?} is not cuda_events or steady_clock", s.timer));
  return s;
}

} // namespace kibench::importers::external
