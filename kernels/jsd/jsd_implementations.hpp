// kibench's GPU implementations of jsd (registered in kernels/registry.cpp,
// each beside the distill_jsd_loss implementation of the same name through
// kernels/operation_switch.hpp, but copy-floor):
//   fused        one bandwidth-bound row kernel: loss and gradient in one
//                read of X and Y and one write of dX (kernels/jsd/jsd_kernels.hpp)
//   reference    PyTorch eager's op sequence, one kernel per op, every
//                intermediate a full [T, V] fp32 tensor
//   oracle-fp64  the same math in fp64
//   copy-floor   the bytes the fused kernel must move, moved by a vectorized
//                copy: the pass's bandwidth limit (computes no loss)
// jsd computes its gradient with its loss, as Liger's kernel does: a full
// pass is the loss and dX, a forward pass the loss alone; there is no
// backward-only pass to time.
#pragma once

#include <memory>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::unique_ptr<Implementation> make_jsd_fused();
std::unique_ptr<Implementation> make_jsd_reference();
std::unique_ptr<Implementation> make_jsd_oracle_fp64();
std::unique_ptr<Implementation> make_copy_floor();

} // namespace kibench
