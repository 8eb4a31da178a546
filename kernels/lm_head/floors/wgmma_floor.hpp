// The kernel behind `wgmma-floor`: a pass's GEMM arithmetic done by the
// tensor cores alone. Each CTA (one per SM, two consumer warpgroups) holds
// four 128 x 256 x 64 operand stages in shared memory, copied once from the
// workload's own input tensors, and runs wgmma m64n256k16 over them, stage
// after stage, as a GEMM's main loop does, but with no loads from global
// memory, no producer, no epilogue and no output tile: every step is 2 · 128
// · 256 · 64 FLOP at the rate the tensor cores and the board's power allow.
// A real GEMM does this plus its data movement, so on the same board and
// data no GEMM of those FLOPs can take less time.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::gpu::tensor_floor {

// FLOP of one CTA step: both warpgroups over one 64-wide K block of the
// CTA's 128 x 256 tile.
inline constexpr double kFlopsPerStep = 2.0 * 128 * 256 * 64;
inline constexpr int kThreadsPerCta = 256;

// A bf16 tensor whose values fill the operand stages, read as a flat array
// of `elements` (wrapped around where a CTA wants more than there is).
struct OperandSource {
  const void *data = nullptr;
  std::int64_t elements = 0;
};

// Steps over operands copied from `a` (the A stages) and `b` (the B stage).
struct Phase {
  OperandSource a, b;
  std::int64_t steps = 0; // over the whole grid
};

// Steps covering `flops`, rounded up (0 for 0).
[[nodiscard]] std::int64_t steps_for(double flops);

// Runs both phases, one after the other, on `ctas` CTAs; each CTA writes
// kThreadsPerCta floats of its accumulators to `sink` so nothing is dead
// code. The phases' sources must be non-empty where their steps are not 0.
void launch(const Phase &first, const Phase &second, int ctas, float *sink, cudaStream_t stream);

} // namespace kibench::gpu::tensor_floor
