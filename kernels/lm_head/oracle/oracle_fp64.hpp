// `oracle-fp64`: the fp64 oracle on the GPU, for cases too big for the CPU
// oracle (kernels/lm_head/oracle/cpu_oracle.hpp), which defines the same numbers. The
// bf16 inputs are widened exactly to fp64; the logits come from fp64
// cuBLASLt GEMMs in token chunks small enough that two [chunk, V] fp64
// blocks fit; each row's loss terms and gradient are evaluated in fp64
// (oracle_kernels.cu); grad W_s accumulates over the chunks in fp64.
// Outputs are fp64 device tensors; is_oracle in the registry.
#pragma once

#include <cstdint>
#include <memory>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::unique_ptr<Implementation> make_oracle_fp64();

namespace gpu {
// Token rows per chunk for `workload` (two [rows, V] fp64 blocks ≤ 4 GiB).
[[nodiscard]] std::int64_t oracle_chunk_rows(const Workload &workload);
} // namespace gpu

} // namespace kibench
