#include "kernels/cuda/gpu_implementation.hpp"

#include <stdexcept>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"

namespace kibench::gpu {

GpuImplementation::GpuImplementation(std::string name, bool caching_allocator)
    : name_(std::move(name)), allocator_(name_, caching_allocator), flush_allocator_(name_ + "-l2-flush") {}

GpuImplementation::~GpuImplementation() {
  // A subclass's release() has run; this only guards against one that did
  // not: nothing may still be running when the allocator goes.
  if (stream_ != nullptr) cudaStreamSynchronize(stream_->get());
}

void GpuImplementation::prepare(const Workload &workload, InputSet &inputs) {
  release();
  device_ = current_device();
  if (stream_ == nullptr) stream_ = std::make_unique<Stream>();
  if (flush_ == nullptr) flush_ = std::make_unique<L2Flush>(flush_allocator_, device_);
  inputs_ = &device_inputs(inputs);
  workload_ = &workload;
  allocator_.reset_peak();
  prepare_device(workload);
}

void GpuImplementation::release() {
  if (stream_ != nullptr) stream_->synchronize();
  if (inputs_ != nullptr) release_device();
  inputs_ = nullptr;
  workload_ = nullptr;
}

std::unique_ptr<SampleTimer> GpuImplementation::make_timer() {
  require_prepared();
  return std::make_unique<CudaEventTimer>(stream_->get(), device_);
}

std::unique_ptr<PowerMonitor> GpuImplementation::make_power_monitor() {
  return make_nvml_power_monitor(device_);
}

void GpuImplementation::flush_caches() {
  require_prepared();
  flush_->flush(stream_->get());
}

void GpuImplementation::wait_idle() {
  require_prepared();
  stream_->synchronize();
}

void GpuImplementation::enqueue_power_load(double seconds) {
  require_prepared();
  if (load_ == nullptr) load_ = std::make_unique<PowerLoad>(flush_allocator_, device_);
  load_->enqueue(stream_->get(), seconds);
}

MemoryUse GpuImplementation::memory() const {
  MemoryUse use;
  if (inputs_ == nullptr) return use; // released: holds nothing
  use.input_bytes = inputs_->bytes();
  use.output_bytes = allocator_.live_bytes(MemoryTag::output);
  use.peak_bytes = use.input_bytes + allocator_.peak_bytes();
  use.workspace_bytes = use.peak_bytes - use.input_bytes - use.output_bytes;
  return use;
}

void GpuImplementation::require_prepared() const {
  if (inputs_ == nullptr) throw std::logic_error(name_ + ": used before prepare()");
}

void GpuImplementation::poison_bytes(void *data, std::size_t bytes) {
  if (bytes != 0) CUDA_CHECK(cudaMemsetAsync(data, 0xFF, bytes, stream_->get()));
}

} // namespace kibench::gpu
