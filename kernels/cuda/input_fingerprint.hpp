// lib/inputs/fingerprint.hpp's fingerprint of a device buffer, computed on
// the device (the same value the host function gives for the same bytes).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::gpu {

// Synchronizes `stream`.
std::uint64_t fingerprint_device_bytes(const void *data, std::size_t bytes, cudaStream_t stream);

} // namespace kibench::gpu
