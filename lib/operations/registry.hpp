// The operations kibench runs, registered once (registry.cpp), in the
// order the reader tries them and the run table lists them.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/operations/operation.hpp"

namespace kibench {

// Every registered operation, in registration order.
[[nodiscard]] const std::vector<OperationKind> &registered_operations();

// The operation named `name`, or nullopt.
[[nodiscard]] std::optional<OperationKind> find_operation_named(std::string_view name);
// The same; a name no operation has is a bug of the caller (std::logic_error).
[[nodiscard]] OperationKind operation_named(std::string_view name);
// The operation whose ABI code is `code`, or nullopt.
[[nodiscard]] std::optional<OperationKind> find_operation_by_abi_code(std::int32_t code);

// Whether `kind` is one of the operations named: how an implementation
// states the positive set it computes.
[[nodiscard]] bool computes_one_of(OperationKind kind, std::initializer_list<std::string_view> names);

// "distill_jsd_loss, jsd and fused_linear_jsd": the names, for messages.
[[nodiscard]] std::string operation_names(std::string_view last_separator = " and ");

} // namespace kibench
