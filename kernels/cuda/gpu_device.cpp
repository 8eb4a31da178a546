#include "kernels/cuda/gpu_device.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_guard.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"

namespace kibench::gpu {

GpuDevice::GpuDevice(const std::string &owner, std::vector<DeviceStream> streams, Timing timing)
    : timing_(timing) {
  if (streams.empty() || (timing == Timing::one_stream && streams.size() != 1))
    throw std::logic_error(fmt::format("{}: a GPU device of {} streams", owner, streams.size()));
  const bool several = streams.size() > 1;
  for (const DeviceStream &where : streams) {
    OnStream on{where, nullptr, nullptr, nullptr};
    on.allocator = std::make_unique<DeviceAllocator>(
        several ? fmt::format("{}-gpu{}-l2-flush", owner, where.device) : owner + "-l2-flush");
    const DeviceGuard guard(where.device);
    on.flush = std::make_unique<L2Flush>(*on.allocator, where.device);
    streams_.push_back(std::move(on));
  }
}

GpuDevice::~GpuDevice() {
  // A flush or a load may still be queued: its buffers go only after it.
  for (const OnStream &on : streams_) {
    const DeviceGuard guard(on.where.device);
    (void)cudaStreamSynchronize(on.where.stream);
  }
}

std::unique_ptr<SampleTimer> GpuDevice::make_timer() {
  if (timing_ == Timing::one_stream)
    return std::make_unique<CudaEventTimer>(streams_[0].where.stream, streams_[0].where.device);
  std::vector<DeviceStream> streams;
  for (const OnStream &on : streams_) streams.push_back(on.where);
  return std::make_unique<MultiDeviceTimer>(std::move(streams));
}

// Every stream's board, summed (one board for one stream).
std::unique_ptr<PowerMonitor> GpuDevice::make_power_monitor() {
  std::vector<int> devices;
  for (const OnStream &on : streams_) devices.push_back(on.where.device);
  return make_nvml_power_monitor(std::move(devices));
}

void GpuDevice::flush_caches() {
  for (OnStream &on : streams_) {
    const DeviceGuard guard(on.where.device);
    on.flush->flush(on.where.stream);
  }
}

void GpuDevice::wait_idle() {
  for (const OnStream &on : streams_) {
    const DeviceGuard guard(on.where.device);
    CUDA_CHECK(cudaStreamSynchronize(on.where.stream));
  }
}

void GpuDevice::enqueue_power_load(double seconds) {
  for (OnStream &on : streams_) {
    const DeviceGuard guard(on.where.device);
    if (on.load == nullptr) on.load = std::make_unique<PowerLoad>(*on.allocator, on.where.device);
    on.load->enqueue(on.where.stream, seconds);
  }
}

} // namespace kibench::gpu
