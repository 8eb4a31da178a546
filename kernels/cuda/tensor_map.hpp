// TMA tensor maps (CUtensorMap) for row-major bf16 matrices, made on the
// host through the driver's cuTensorMapEncodeTiled, which the CUDA runtime
// hands out (no link against libcuda).
#pragma once

#include <cstdint>

#include <cuda.h>

namespace kibench::gpu {

// The columns one box spans: 64 bf16 are one 128-byte swizzle row.
inline constexpr int kTensorMapBoxColumns = 64;

// A [rows, columns] bf16 matrix with row stride `ld` elements, read in
// boxes of `box_rows` x 64 columns into shared memory with the 128-byte
// swizzle that wgmma's K-major descriptors expect (cuda/wgmma.cuh).
// Out-of-range box elements read as zero. TMA needs `base` 16-byte aligned
// and ld·2 a multiple of 16 bytes: callers check can_map_bf16 first.
[[nodiscard]] CUtensorMap bf16_tensor_map(const void *base, std::int64_t rows, std::int64_t columns,
                                          std::int64_t ld, int box_rows);
[[nodiscard]] bool can_map_bf16(const void *base, std::int64_t ld);

} // namespace kibench::gpu
