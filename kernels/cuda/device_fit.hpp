// Whether a GPU implementation can run here: a GPU at all, and enough
// device memory for its predicted peak. unsupported() answers with this
// line before anything is allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kibench::gpu {

// nullopt when `needed_bytes` fit device 0's total memory less a margin for
// the CUDA context and other allocations; else one line saying what
// `implementation` needs and what the device has (or why there is no GPU).
[[nodiscard]] std::optional<std::string> device_fit(std::string_view implementation,
                                                    std::uint64_t needed_bytes);

// The current device's index (cudaGetDevice).
[[nodiscard]] int current_device();

} // namespace kibench::gpu
