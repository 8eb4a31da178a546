// distill_jsd_loss: two LM heads, the hard cross-entropy on the student and
// the soft JSD between student and teacher (docs/loss-math.md);
// KernelIndex's curated OperationSpec, the seed record's operation.
#pragma once

#include <string_view>

#include "lib/operations/operation.hpp"

namespace kibench {

// workloads/operations/distill_jsd_loss.json's identity digest.
inline constexpr std::string_view kDistillJsdLossOperationDigest =
    "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5";

[[nodiscard]] const Operation &distill_jsd_loss_operation();

} // namespace kibench
