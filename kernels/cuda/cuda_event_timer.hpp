// SampleTimer on CUDA events recorded on the implementation's stream: the
// time the GPU spent between start() and stop(), free of host launch
// jitter. The SM clock and the board's power are read from NVML right
// after each sample's stop is enqueued, while the sample's kernels still
// run, so a throttled, idle-clocked or power-capped GPU shows in the
// record; without NVML they are nullopt.
#pragma once

#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/cuda/stream.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench::gpu {

class CudaEventTimer final : public SampleTimer {
public:
  CudaEventTimer(cudaStream_t stream, int device);

  void start() override;
  void stop() override;
  double elapsed_ns() override;
  std::optional<double> clock_mhz() override { return clock_mhz_; }
  std::optional<double> power_w() override { return power_w_; }
  [[nodiscard]] std::string name() const override { return "cuda_events"; }

private:
  cudaStream_t stream_;
  int device_;
  Event start_, stop_;
  std::optional<double> clock_mhz_;
  std::optional<double> power_w_;
};

} // namespace kibench::gpu
