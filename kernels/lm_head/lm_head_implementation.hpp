// A GPU implementation of distill_jsd_loss that computes fused_linear_jsd
// as well: fused_linear_jsd is distill_jsd_loss with w_h = 0, Hs = H and no
// bias, so the same code computes it (docs/loss-math.md), under the
// revision revision_on gives it (kernels/builtin_revision.hpp).
#pragma once

#include "kernels/builtin_revision.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "lib/operations/registry.hpp"

namespace kibench::gpu {

class LmHeadImplementation : public GpuImplementation {
public:
  using GpuImplementation::GpuImplementation;

  [[nodiscard]] bool runs(OperationKind kind) const override {
    return computes_one_of(kind, {"distill_jsd_loss", "fused_linear_jsd"});
  }
  [[nodiscard]] RevisionFacts revision_for(OperationKind kind) const override {
    return revision_on(revision(), kind);
  }
};

} // namespace kibench::gpu
