// The two CPU implementations (registered in kernels/registry.cpp), each of
// distill_jsd_loss, jsd and fused_linear_jsd (kernels/operation_switch.hpp):
//   cpu-fp64       the fp64 oracle (kernels/lm_head/oracle/cpu_oracle.hpp) as an
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

// Their jsd parts: kernels/jsd/oracle/cpu_jsd_fp64.cpp (the fp64 oracle of
// kernels/jsd/oracle/jsd_oracle.hpp) and kernels/jsd/reference/cpu_jsd_reference.cpp
// (PyTorch eager's jsd op sequence in fp32).
std::unique_ptr<Implementation> make_cpu_jsd_fp64();
std::unique_ptr<Implementation> make_cpu_jsd_reference();

} // namespace kibench
