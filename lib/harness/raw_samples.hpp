// The raw samples file written beside every BenchmarkRun and referenced from
// it by digest (spec.timing.rawSamples): one entry per sample with its time,
// SM clock, board power, interleave round, throttle flag and (rested
// samples) the wait before it, so a compare can recompute every statistic
// and pair samples across implementations.
#pragma once

#include <string>

#include "lib/harness/harness.hpp"
#include "lib/json/value.hpp"

namespace kibench {

inline constexpr std::string_view kRawSamplesFormat = "kibench.dev/raw-samples/v1";

json::Value raw_samples_document(const Measurement &m, const std::string &invocation_id);

// Reads one back (for compare); InputError naming the file on a bad one.
Measurement read_raw_samples(const json::Value &doc, const std::string &source, std::string *invocation_id);

} // namespace kibench
