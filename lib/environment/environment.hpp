// What a result was measured on. Only facts that stay the same from run to
// run on one machine enter the manifest's spec (and so its digest); readings
// that drift (current clocks, hostnames) go into metadata labels.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "lib/json/value.hpp"

namespace kibench {

struct EnvironmentFacts {
  std::string vendor;       // "nvidia", "intel", "amd"
  std::string product;      // "NVIDIA H200"
  std::string architecture; // "sm_90", "x86_64"
  std::string form_factor;  // e.g. "141GB HBM3e"; empty when unknown
  std::optional<std::uint64_t> memory_bytes;
  int count = 1;
  // How the GPUs a multi-GPU run uses are linked (gpu_topology.hpp); empty
  // for single-GPU runs.
  std::string interconnect;

  std::string operating_system;                 // "Ubuntu 24.04.1 LTS"
  std::string kernel;                           // uname -r
  std::string driver;                           // GPU driver
  std::string cuda_toolkit;                     // CUDA runtime version
  std::string compiler;                         // the compiler kibench was built with
  std::map<std::string, std::string> libraries; // cublaslt, fmt, libsodium, simdjson, kibench

  std::optional<bool> ecc_enabled;
  std::optional<bool> persistence_mode;
  std::optional<double> power_limit_watts; // the board's enforced power limit
  // The SM clock held by a lock or applications-clocks setting
  // (clock_control.hpp says how it is read); false where unknown.
  bool clocks_locked = false;
  // Variables that set how the run's libraries behave (NCCL_* for a
  // multi-GPU run): the manifest's settings.environmentVariables.
  std::map<std::string, std::string> environment_variables;

  std::map<std::string, std::string> labels; // drifting readings (metadata only)
  // The board's peak DRAM bandwidth (NVML's maximum memory clock and the bus
  // width), for "% of peak" beside GB/s; a label, not part of the identity.
  std::optional<double> peak_memory_bandwidth_gbps;
};

// Facts about the host: CPU, OS, kernel, compiler and library versions.
EnvironmentFacts probe_host_environment();

// The ExecutionEnvironment manifest (schema-valid).
json::Value environment_manifest(const EnvironmentFacts &facts);

} // namespace kibench
