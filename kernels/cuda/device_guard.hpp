// Makes `device` the calling thread's current CUDA device for a scope and
// restores the one before: allocations, streams, events and launches of a
// program that drives several GPUs from one thread go to the device they
// are meant for, and the rest of the program still finds device 0 current.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

class DeviceGuard {
public:
  explicit DeviceGuard(int device) {
    CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { (void)cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

private:
  int previous_ = 0;
};

} // namespace kibench::gpu
