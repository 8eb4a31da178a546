// jsd: the JSD between two [tokens, vocab] log-probability tensors (Liger's
// LigerJSD), fp32 as Liger's benchmark; no GEMM, so bytes bound it.
#pragma once

#include <string_view>

#include "lib/operations/operation.hpp"

namespace kibench {

// workloads/operations/jsd.json's identity digest.
inline constexpr std::string_view kJsdOperationDigest =
    "sha256:eccbf4150e60ad41ce52a4bd06fa582b8b4d5ed394fcd096f069b08eadf420e6";

[[nodiscard]] const Operation &jsd_operation();

} // namespace kibench
