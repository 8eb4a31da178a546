// Calibration sentinels (KernelIndex ENGINEERING_DESIGN §17.9): short,
// fixed pieces of work kibench times before and after a workload's lanes,
// so a run on a board that is slower than itself (a co-running job, a
// throttled clock, a degraded link) says so. Three, one per bound:
//
//   launch   the latency of the smallest unit of work (GPU: an empty
//            kernel's launch and completion; CPU: a system call), µs
//   copy     memory bandwidth (GPU: a 256 MiB device-to-device copy; CPU:
//            a 64 MiB memcpy), GB/s
//   compute  arithmetic throughput (GPU: a bf16 tensor-core GEMM; CPU: fp32
//            fused multiply-adds in independent chains), TFLOP/s or GFLOP/s
//
// Each is the median of several repetitions. The backend runs them
// (Backend::run_sentinels); the host's are here, free of CUDA.
#pragma once

#include <string>
#include <vector>

namespace kibench::calibration {

struct SentinelReading {
  std::string name; // "launch", "copy", "compute"
  std::string unit; // "us", "GB/s", "TFLOP/s", "GFLOP/s"
  double value = 0.0;
  bool higher_is_better = true; // false for latencies
};

struct SentinelSet {
  std::string device; // what ran them: "NVIDIA H100 80GB HBM3 (GPU 0)", "host CPU"
  std::vector<SentinelReading> readings;
};

// The host's sentinels (what a CPU-only machine's backend runs).
SentinelSet host_sentinels();

// "launch 0.21 us, copy 9.8 GB/s, compute 31.2 GFLOP/s"
std::string describe(const SentinelSet &set);

} // namespace kibench::calibration
