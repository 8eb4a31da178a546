// The preconditioning load of `--power-state loaded`
// (lib/harness/power_state.hpp): every SM issues bf16 tensor-core MMAs on
// registers, with no memory traffic, until the GPU's global timer has
// advanced by the requested time. It is timed by the device's own clock,
// so it lasts as long whatever clock the limiter allows, and draws the
// board's power the way the GEMM-bound samples after it do.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/cuda/device_buffer.hpp"

namespace kibench::gpu {

class PowerLoad {
public:
  // `allocator` holds one word per block (the MMAs' results, written so the
  // compiler keeps them).
  PowerLoad(DeviceAllocator &allocator, int device);
  // Enqueues `seconds` of load on `stream`.
  void enqueue(cudaStream_t stream, double seconds);

private:
  int blocks_ = 0;
  DeviceBuffer<float> sink_;
};

} // namespace kibench::gpu
