// What one run directory records: per implementation its check, samples,
// statistics and run digest, and the workload they share. Filled by
// `kibench run` (session.cpp) and by imports of another harness's samples.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/harness/harness.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/stats/summary.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

struct ImplementationOutcome {
  std::string name;
  std::string status; // BenchmarkRun status
  std::optional<CorrectnessVerdict> verdict;
  Measurement measurement;
  stats::Summary latency_ns;
  MemoryUse memory;
  json::Object labels; // Implementation::run_labels()
  double tflops = 0.0; // effective: the workload's GEMM FLOPs / median
  bool computes_loss = true;
  double loss = 0.0;
  std::string run_digest;
};

struct WorkloadOutcome {
  Workload workload;
  std::filesystem::path run_dir;
  std::string oracle;
  double oracle_loss = 0.0;
  std::vector<ImplementationOutcome> implementations;
  std::vector<std::pair<std::string, std::string>> skipped; // name, reason
};

} // namespace kibench
