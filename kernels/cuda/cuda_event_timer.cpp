#include "kernels/cuda/cuda_event_timer.hpp"

#include "kernels/cuda/nvml.hpp"

namespace kibench::gpu {

CudaEventTimer::CudaEventTimer(cudaStream_t stream, int device) : stream_(stream), device_(device) {}

void CudaEventTimer::start() {
  start_.record(stream_);
}

void CudaEventTimer::stop() {
  stop_.record(stream_);
  clock_mhz_.reset();
  power_w_.reset();
  if (const Nvml *nvml = Nvml::instance()) {
    if (const auto mhz = nvml->clock_mhz(device_, Nvml::Clock::sm)) clock_mhz_ = static_cast<double>(*mhz);
    if (const auto mw = nvml->instant_power_mw(device_)) power_w_ = static_cast<double>(*mw) * 1e-3;
  }
}

double CudaEventTimer::elapsed_ns() {
  stop_.synchronize();
  return static_cast<double>(Event::elapsed_ms(start_, stop_)) * 1.0e6;
}

} // namespace kibench::gpu
