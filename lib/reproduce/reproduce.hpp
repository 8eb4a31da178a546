// `kibench reproduce RECORD...` as a library call: read every record,
// resolve what each ran (resolve.hpp) and refuse what cannot run here, all
// before any work; then, per record, run its implementation on its workload
// and pass through run_session (as `kibench run` does), and write one
// directory per record, staged and moved into place whole:
//
//   <out>/<timestamp>-reproduce-<implementation>-<digest prefix>/
//     <the run directory kibench run writes>/   its BenchmarkRun labelled
//                                               reproduces_run: <the record's digest>
//     verdict.json      the verdict (verdict.hpp)
//     attestation.json  KernelIndex's attestation request body (attestation.hpp)
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/environment/clock_control.hpp"
#include "lib/harness/progress.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/json/value.hpp"
#include "lib/reproduce/verdict.hpp"
#include "lib/run/backend.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::reproduce {

struct ReproduceOptions {
  std::vector<std::filesystem::path> records;
  std::filesystem::path out_dir = "reproduced";
  ProtocolSettings settings; // its pass is each record's
  std::optional<ClockTarget> lock_clocks;
  std::string label; // --label, as kibench run's
  double tolerance = kDefaultTolerance;
  std::string evidence_url; // "" or https://...
  stats::BootstrapSettings bootstrap;
  std::function<void(const std::string &)> note;
  ProgressCallback progress;
};

struct ReproduceOutcome {
  Verdict verdict;
  json::Value attestation;         // the request body written as attestation.json
  std::filesystem::path directory; // the reproduction's directory
  bool check_failed = false;       // the run here failed (kibench run would exit 1)
};

// The label every reproduced BenchmarkRun carries: the original's digest.
inline constexpr std::string_view kReproducesLabel = "reproduces_run";

// The backend a record of `pass` runs on: a plugin (a Python lane) is told
// the pass it is timed for when it is loaded.
using BackendForPass = std::function<std::unique_ptr<Backend>(Pass)>;

// `done` is called with each reproduction as soon as its directory is written.
std::vector<ReproduceOutcome>
reproduce_records(const BackendForPass &backend_for, const ReproduceOptions &options,
                  const std::function<void(const ReproduceOutcome &)> &done = {});

} // namespace kibench::reproduce
