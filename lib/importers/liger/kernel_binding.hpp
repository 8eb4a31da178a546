// How a row of each JSD-family kernel binds its OperationSpec: which row
// values are the axes, the float dtype and the scalars (kernelindex/liger/
// README.md, rule 6). Liger's benchmark scripts put the swept value in
// x_value and everything else in the config JSON, differently per kernel.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::importers::liger {

inline constexpr std::array<std::string_view, 3> kJsdFamily{"jsd", "fused_linear_jsd", "distill_jsd_loss"};

bool in_jsd_family(std::string_view kernel);

struct BoundCase {
  // The operation's variable axes, each a positive integer.
  std::vector<std::pair<std::string, std::int64_t>> axes;
  std::string float_dtype; // "bf16", "fp16" or "fp32": the dtype of every float tensor
  std::vector<std::pair<std::string, double>> scalars; // fp32 scalars, in the order given
};

// Throws RowSkipped(did_not_bind) saying which value is missing or wrong.
BoundCase bind_kernel_row(std::string_view kernel, std::string_view x_name, double x_value,
                          const json::Object &config);

} // namespace kibench::importers::liger
