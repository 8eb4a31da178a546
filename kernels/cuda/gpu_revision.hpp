// The ImplementationRevision manifest of a kibench GPU implementation: the
// CPU implementations' shape (kernels/cpu/cpu_common.hpp) with a CUDA callable and
// the architecture kibench's kernels are compiled for.
#pragma once

#include "kernels/cpu/cpu_common.hpp"
#include "lib/json/value.hpp"

namespace kibench::gpu {

// CMAKE_CUDA_ARCHITECTURES is 90a: the binary runs on Hopper only.
inline constexpr std::string_view kCompiledArchitecture = "sm_90a";

[[nodiscard]] json::Value revision_manifest(const cpu::RevisionFacts &facts);

} // namespace kibench::gpu
