// `wgmma-floor`: the pass's GEMM FLOPs on the tensor cores alone
// (kernels/lm_head/floors/wgmma_floor.hpp), timed in the same run as the implementations.
// Where `cublas-floor` is what the best library GEMMs take for the four
// products, this is what no GEMM can beat on the same board, data and
// power limit: it moves no operand through global memory and writes no
// output. The gap between the two is all a hand-written GEMM could gain; the
// gap between it and `fused` bounds what fusing can. It computes no loss
// (computes_loss() is false).
#pragma once

#include <memory>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::unique_ptr<Implementation> make_wgmma_floor();

} // namespace kibench
