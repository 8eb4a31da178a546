// SampleTimer for work spread over several GPUs from one host thread: a
// barrier, then CUDA events on every device's stream. start() waits until
// every stream has finished what was enqueued before (the cache flushes,
// a power-state load), so all devices start the sample from idle together,
// then records each device's start event; stop() records each stop event.
// The sample is the slowest device's time from its start to its stop
// event (events of two devices cannot be subtracted; the starts follow the
// barrier within the few microseconds the host takes to record them).
// Its SM clock is the lowest of the devices', its power the sum of their
// boards', read from NVML as stop() returns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/stream.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench::gpu {

struct DeviceStream {
  int device = 0;
  cudaStream_t stream = nullptr;
};

class MultiDeviceTimer final : public SampleTimer {
public:
  explicit MultiDeviceTimer(std::vector<DeviceStream> streams);
  void start() override;
  void stop() override;
  double elapsed_ns() override;
  std::optional<double> clock_mhz() override { return clock_mhz_; }
  std::optional<double> power_w() override { return power_w_; }
  // The same timer as CudaEventTimer's: CUDA events, one pair a device.
  [[nodiscard]] std::string name() const override { return "cuda_events"; }
  // Each device's time of the last sample, in rank order (after elapsed_ns()).
  [[nodiscard]] const std::vector<double> &device_ns() const { return device_ns_; }

private:
  std::vector<DeviceStream> streams_;
  std::vector<Event> starts_, stops_;
  std::vector<double> device_ns_;
  std::optional<double> clock_mhz_;
  std::optional<double> power_w_;
};

// The slowest of the devices' times (the sample's), nanoseconds.
[[nodiscard]] double slowest_device_ns(const std::vector<double> &device_ns);

} // namespace kibench::gpu
