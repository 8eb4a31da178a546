// The two CPU implementations (registered in kernels/registry.cpp):
//   cpu-fp64       the fp64 oracle (kernels/oracle/cpu_oracle.hpp) as an
//                  implementation; fp64 gradients. The reference every
//                  other implementation is checked against on small cases.
//   cpu-reference  a CPU mirror of the torch-equivalent reference chain
//                  (docs/loss-math.md, "Reference semantics"): bf16 GEMMs
//                  with fp32 accumulation, the loss op by op in fp32, bf16
//                  gradients. Shows what the GPU reference's error looks like.
#pragma once

#include <memory>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::unique_ptr<Implementation> make_cpu_fp64();
std::unique_ptr<Implementation> make_cpu_reference();

} // namespace kibench
