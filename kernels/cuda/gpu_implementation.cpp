#include "kernels/cuda/gpu_implementation.hpp"

#include <stdexcept>

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/gpu_device.hpp"

namespace kibench::gpu {

GpuImplementation::GpuImplementation(std::string name, bool caching_allocator)
    : name_(std::move(name)), allocator_(name_, caching_allocator) {}

GpuImplementation::~GpuImplementation() {
  // A subclass's release() has run; this only guards against one that did
  // not: nothing may still be running when the allocator goes.
  if (stream_ != nullptr) cudaStreamSynchronize(stream_->get());
}

void GpuImplementation::prepare(const Workload &workload, InputSet &inputs) {
  release();
  device_ = current_device();
  if (stream_ == nullptr) stream_ = std::make_unique<Stream>();
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

std::unique_ptr<Device> GpuImplementation::open_device() {
  require_prepared();
  return std::make_unique<GpuDevice>(name_, std::vector<DeviceStream>{{device_, stream_->get()}});
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
