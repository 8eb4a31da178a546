// The RUN arguments of `kibench compare`, read into ComparedRuns.
//
// A RUN is a BenchmarkRun manifest file (or a file holding an array or an
// object of manifests), a run directory (every BenchmarkRun in it:
// run.<impl>.json of `kibench run`, run.json of an imported record), or a
// directory of such directories. A run's workload, protocol, environment
// and implementation are found by digest among every manifest given and
// those beside a named file; its raw samples through spec.timing.rawSamples
// (uri relative to the run's file), whose sha256 must match.
//
// Errors: InputError (exit 2) for a path that holds no run, a reference that
// nothing given resolves, an unreadable or malformed samples file;
// CheckFailed (exit 1) for a digest that does not match what it names.
#pragma once

#include <filesystem>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/digest/manifest_set.hpp"

namespace kibench::compare {

std::vector<ComparedRun> load_runs(const std::vector<std::filesystem::path> &arguments);

// Nanoseconds of a KernelIndex latency: an integer, or a string such as
// "213.2ms" / "1.5 µs". nullopt when it is neither.
std::optional<double> latency_ns(const json::Value &value);

// The raw samples `run` references (spec.timing.rawSamples, else
// spec.evidence.rawSamples; the uri relative to its file), read and checked
// against their sha256. nullopt, with `missing` saying why, when it
// references none or a file that is not local. InputError for an unreadable
// or malformed file, CheckFailed for a digest that does not match.
std::optional<RawSeries> raw_samples_of(const ManifestEntry &run, std::string &missing);

} // namespace kibench::compare
