// fused_linear_jsd: two LM heads and the JSD between them, no hard loss
// (Liger's LigerFusedLinearJSD): distill_jsd_loss with w_h = 0, w_s = 1 and
// the student as wide as the teacher.
#pragma once

#include <string_view>

#include "lib/operations/operation.hpp"

namespace kibench {

// workloads/operations/fused_linear_jsd.json's identity digest.
inline constexpr std::string_view kFusedLinearJsdOperationDigest =
    "sha256:71138de338d4a1a85e751a2db3bd1a1c08f93a234a9ab0cfd9c5ab35eb180b72";

[[nodiscard]] const Operation &fused_linear_jsd_operation();

} // namespace kibench
