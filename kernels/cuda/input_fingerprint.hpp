// lib/inputs/fingerprint.hpp's fingerprint of a device buffer, computed on
// the device (the same value the host function gives for the same bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

namespace kibench::gpu {

// The fingerprint of each (pointer, bytes) buffer: one launch each, one
// copy back and one synchronization of `stream` for all of them.
std::vector<std::uint64_t>
fingerprint_device_buffers(const std::vector<std::pair<const void *, std::size_t>> &buffers,
                           cudaStream_t stream);

} // namespace kibench::gpu
