// The launch sentinel's kernel (sentinels.hpp): it does nothing.
#pragma once

#include <cuda_runtime_api.h>

namespace kibench::gpu {

// Enqueues an empty kernel of one thread on `stream`; checks the launch.
void launch_empty_kernel(cudaStream_t stream);

} // namespace kibench::gpu
