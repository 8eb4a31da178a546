// The C ABI's codes (include/kibench/kibench.h, kibench_plugin.h) as
// kibench's types, in one place: the plugin adapter and the C API translate
// through these. An operation's code is its Operation's abi_code()
// (lib/operations/).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "include/kibench/kibench_plugin.h"
#include "lib/implementation/implementation.hpp"
#include "lib/implementation/tensor_ref.hpp"
#include "lib/manifest/run_status.hpp"

namespace kibench::abi {

[[nodiscard]] constexpr std::int32_t pass_code(Pass pass) {
  switch (pass) {
  case Pass::forward:
    return KIBENCH_PASS_FORWARD;
  case Pass::backward:
    return KIBENCH_PASS_BACKWARD;
  case Pass::full:
    return KIBENCH_PASS_FULL;
  }
  return KIBENCH_PASS_FULL;
}

// The pass of a code, or nullopt for none of forward, backward, full.
[[nodiscard]] constexpr std::optional<Pass> pass_of(std::int32_t code) {
  switch (code) {
  case KIBENCH_PASS_FORWARD:
    return Pass::forward;
  case KIBENCH_PASS_BACKWARD:
    return Pass::backward;
  case KIBENCH_PASS_FULL:
    return Pass::full;
  default:
    return std::nullopt;
  }
}

[[nodiscard]] constexpr std::int32_t dtype_code(ElementType type) {
  switch (type) {
  case ElementType::bf16:
    return KIBENCH_DTYPE_BF16;
  case ElementType::fp32:
    return KIBENCH_DTYPE_FP32;
  case ElementType::fp64:
    return KIBENCH_DTYPE_FP64;
  }
  return KIBENCH_DTYPE_FP64;
}

// The floating type of a dtype code, or nullopt (int64, or no dtype).
[[nodiscard]] constexpr std::optional<ElementType> float_type_of(std::int32_t code) {
  switch (code) {
  case KIBENCH_DTYPE_BF16:
    return ElementType::bf16;
  case KIBENCH_DTYPE_FP32:
    return ElementType::fp32;
  case KIBENCH_DTYPE_FP64:
    return ElementType::fp64;
  default:
    return std::nullopt;
  }
}

[[nodiscard]] constexpr std::string_view dtype_name(std::int32_t code) {
  switch (code) {
  case KIBENCH_DTYPE_BF16:
    return "bf16";
  case KIBENCH_DTYPE_FP32:
    return "fp32";
  case KIBENCH_DTYPE_FP64:
    return "fp64";
  case KIBENCH_DTYPE_INT64:
    return "int64";
  default:
    return "unknown";
  }
}

// The RunStatus of a plugin's failing status (any code but the named ones
// is a runtime error).
[[nodiscard]] constexpr RunStatus run_status_of(std::int32_t code) {
  switch (code) {
  case KIBENCH_PLUGIN_INCORRECT_SHAPE:
    return RunStatus::incorrect_shape;
  case KIBENCH_PLUGIN_INCORRECT_DTYPE:
    return RunStatus::incorrect_dtype;
  case KIBENCH_PLUGIN_TIMEOUT:
    return RunStatus::timeout;
  case KIBENCH_PLUGIN_RESOURCE_EXCEEDED:
    return RunStatus::resource_exceeded;
  default:
    return RunStatus::runtime_error;
  }
}

// A kibench_tensor over `data` (dtype a kibench_dtype; rank 1 when columns
// is 0): how the plugin adapter hands tensors to a plugin and the C API to
// its caller.
[[nodiscard]] constexpr kibench_tensor tensor_view(const void *data, std::int32_t dtype, bool on_device,
                                                   std::int64_t rows, std::int64_t columns) {
  kibench_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.on_device = on_device ? 1 : 0;
  t.rank = columns > 0 ? 2 : 1;
  t.shape[0] = rows;
  t.shape[1] = columns > 0 ? columns : 0;
  return t;
}

} // namespace kibench::abi
