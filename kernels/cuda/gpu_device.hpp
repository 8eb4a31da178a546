// A GPU implementation's Device (lib/implementation/device.hpp): CUDA
// events on its streams, NVML's energy counters, an L2 flush and the
// power-state load enqueued on each stream. The flush buffers and the
// load's words come from allocators of the device's own, so they never
// count as the implementation's memory (they do count in kibench's
// footprint, DeviceAllocator::process()).
//
// Timing::one_stream: a CudaEventTimer on the one stream, with that GPU's
// SM clock and board power. Timing::across_gpus (the vocabulary-parallel
// lanes, one stream a GPU, however many GPUs): a MultiDeviceTimer, a host
// barrier then the slowest GPU's time, and every board's energy summed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/multi_device_timer.hpp"
#include "kernels/cuda/power_load.hpp"
#include "lib/implementation/device.hpp"

namespace kibench::gpu {

class GpuDevice final : public Device {
public:
  enum class Timing { one_stream, across_gpus };

  // `owner` names the allocators ("fused-l2-flush"); allocates each
  // stream's flush buffer on its GPU. one_stream takes exactly one stream.
  GpuDevice(const std::string &owner, std::vector<DeviceStream> streams, Timing timing = Timing::one_stream);
  ~GpuDevice() override;
  GpuDevice(const GpuDevice &) = delete;
  GpuDevice &operator=(const GpuDevice &) = delete;

  std::unique_ptr<SampleTimer> make_timer() override;
  std::unique_ptr<PowerMonitor> make_power_monitor() override;
  // Writes twice the L2's size on each stream.
  void flush_caches() override;
  // Waits for each stream.
  void wait_idle() override;
  // The tensor-core load (power_load.hpp) on each stream, made on first use.
  void enqueue_power_load(double seconds) override;

private:
  struct OnStream {
    DeviceStream where;
    std::unique_ptr<DeviceAllocator> allocator; // first: outlives the flush and the load
    std::unique_ptr<L2Flush> flush;
    std::unique_ptr<PowerLoad> load;
  };
  std::vector<OnStream> streams_;
  Timing timing_;
};

} // namespace kibench::gpu
