// `reference`: the torch-equivalent GPU implementation — eager PyTorch's op
// chain for the seed's module, with full [T, V] logits, every intermediate
// a separate fp32 tensor and kernel (reference_chain.cpp), and bf16 GEMMs
// through cuBLASLt. It is the baseline users know (PyTorch eager: 176.5 ms,
// 69 GB on an H200 for the seed case): neither slowed down nor fused.
#pragma once

#include <cstdint>
#include <memory>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::unique_ptr<Implementation> make_reference();

namespace gpu {
// Device bytes the reference holds at its peak for `workload` (inputs,
// gradients, cuBLASLt workspace and the chain's tensors), predicted on the
// host by counting the chain's allocations.
[[nodiscard]] std::uint64_t reference_peak_bytes(const Workload &workload, Pass pass);
} // namespace gpu

} // namespace kibench
