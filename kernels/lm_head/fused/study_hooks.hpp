// The dev-only seam of `fused`: what the studies under dev/ (and the tests
// of the same paths) change in a pass that nothing registered sets. The
// shipped options are FusedOptions (fused_implementation.hpp); these ride
// beside them, only through make_fused_for_study.
#pragma once

#include <memory>

#include <cuda_runtime.h>

#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/row_loss.hpp"

namespace kibench {

// Where a study records the boundaries of a pass's stages on its stream
// (dev/perf/stage_clock.hpp's events): start() opens a pass, each
// mark(stage) closes the stage begun at the previous mark.
class StageMarks {
public:
  virtual ~StageMarks() = default;
  virtual void start(cudaStream_t stream) = 0;
  virtual void mark(const char *stage, cudaStream_t stream) = 0;
};

struct FusedStudyHooks {
  // The row kernel (row_loss.hpp): a superseded version a dev study runs in
  // the shipped one's place (dev/fused/row_kernels.hpp); default: shipped.
  gpu::fused::RowKernel row_kernel = {};
  // Not owned: run() marks each stage on it, per chunk
  // (dev/perf/fused_stages_perf.cpp).
  StageMarks *stage_marks = nullptr;
  // The token count, the target sort and grad x's one-hot finish on the
  // pass's own stream (as before 2026-12-07), not on a side stream beside
  // the GEMMs.
  bool small_kernels_in_line = false;
};

std::unique_ptr<Implementation> make_fused_for_study(FusedOptions options, FusedStudyHooks hooks);

} // namespace kibench
