// What two BenchmarkProtocols set differently: every structured field of
// their specs by path ("measurement.warmupIterations 3 ≠ 5"), and the
// sampling settings kibench states in the comparability notes by name
// ("maxSamples 300 ≠ 1000"); notes that differ in anything else are named
// by their first differing sentence.
#pragma once

#include <vector>

#include "lib/compare/field_difference.hpp"
#include "lib/json/value.hpp"

namespace kibench::compare {

// `a` and `b` are BenchmarkProtocol manifests (their spec is compared).
std::vector<FieldDifference> protocol_differences(const json::Value &a, const json::Value &b);

} // namespace kibench::compare
