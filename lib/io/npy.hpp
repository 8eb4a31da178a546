// NumPy .npy (format 1.0) writing, so anyone can re-check a run's tensors in
// NumPy or PyTorch. bf16 has no NumPy dtype: it is stored as its uint16 bit
// pattern ('<u2'); `np.load(f).astype(np.uint32) << 16` viewed as float32
// recovers the values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kibench::io {

// descr: "<u2", "<i8", "<f4" or "<f8"; data holds prod(shape) elements.
std::string npy_bytes(std::string_view descr, const std::vector<std::int64_t> &shape, const void *data,
                      std::size_t element_bytes);

} // namespace kibench::io
