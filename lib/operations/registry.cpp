#include "lib/operations/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "lib/operations/distill_jsd_loss/distill_jsd_loss.hpp"
#include "lib/operations/fused_linear_jsd/fused_linear_jsd.hpp"
#include "lib/operations/jsd/jsd.hpp"

namespace kibench {

const std::vector<OperationKind> &registered_operations() {
  // One line per operation; the first is the default (OperationKind()).
  static const std::vector<OperationKind> operations{
      OperationKind(distill_jsd_loss_operation()),
      OperationKind(jsd_operation()),
      OperationKind(fused_linear_jsd_operation()),
  };
  return operations;
}

OperationKind::OperationKind() : operation_(&registered_operations().front().operation()) {}

std::size_t OperationKind::rank() const {
  const auto &all = registered_operations();
  const auto at = std::find_if(all.begin(), all.end(), [&](OperationKind k) { return k.operation_ == operation_; });
  return static_cast<std::size_t>(at - all.begin());
}

std::optional<OperationKind> find_operation_named(std::string_view name) {
  for (const OperationKind kind : registered_operations())
    if (kind.name() == name) return kind;
  return std::nullopt;
}

OperationKind operation_named(std::string_view name) {
  if (const auto kind = find_operation_named(name)) return *kind;
  throw std::logic_error(fmt::format("no operation named {:?} is registered", name));
}

std::optional<OperationKind> find_operation_by_abi_code(std::int32_t code) {
  for (const OperationKind kind : registered_operations())
    if (kind->abi_code() == code) return kind;
  return std::nullopt;
}

bool computes_one_of(OperationKind kind, std::initializer_list<std::string_view> names) {
  bool named = false;
  for (const std::string_view name : names) {
    if (!find_operation_named(name)) throw std::logic_error(fmt::format("no operation named {:?}", name));
    named = named || kind.name() == name;
  }
  return named;
}

std::string operation_names(std::string_view last_separator) {
  const auto &all = registered_operations();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? last_separator : std::string_view(", ");
    out += all[i].name();
  }
  return out;
}

} // namespace kibench
