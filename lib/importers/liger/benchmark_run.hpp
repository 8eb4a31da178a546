// The BenchmarkRun of an imported row (kernelindex/liger/README.md, rules
// 3, 8 and 9): the median as integer nanoseconds, p20/p80 as measurements,
// the upstream milliseconds unrounded in sourceNative.
#pragma once

#include <cstdint>
#include <string>

#include "lib/importers/liger/speed_row.hpp"
#include "lib/json/value.hpp"

namespace kibench::importers::liger {

struct BenchmarkRunFields {
  std::string name;          // metadata.name
  std::string title;         // metadata.title
  std::string liger_version; // metadata.labels.liger_version
  std::string implementation_digest;
  std::string workload_digest;
  std::string protocol_digest;
  std::string environment_digest;
  std::string observed_at; // "2024-12-03T08:00:25.000Z"
  std::string benchmark;   // "<kernel>/<mode>"
  std::string external_id;
  QuantilesMs ms; // p50 finite and positive
};

json::Value make_benchmark_run(const BenchmarkRunFields &fields);

// round(ms × 1e6) with ties upward, as JavaScript's Math.round does it:
// 213.1598663330078 ms -> 213159866 ns. Exact for every double, unlike
// floor(x + 0.5), whose addition can round a fraction just below one half
// up to the next integer.
std::int64_t milliseconds_to_ns(double ms);

} // namespace kibench::importers::liger
