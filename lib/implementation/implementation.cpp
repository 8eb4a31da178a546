#include "lib/implementation/implementation.hpp"

#include <fmt/format.h>

#include "lib/enum_names.hpp"

namespace kibench {

namespace {
constexpr EnumName<Pass> kPassNames[] = {{Pass::forward, "forward"}, {Pass::backward, "backward"}, {Pass::full, "full"}};
} // namespace

std::string_view to_string(Pass pass) {
  return name_in(kPassNames, pass, "full");
}

std::optional<Pass> pass_from_string(std::string_view text) {
  return value_named(kPassNames, text);
}

std::string pass_names() {
  return names_listed(kPassNames);
}

std::optional<std::string> other_operation(const Implementation &implementation, const Workload &w) {
  if (implementation.runs(w.operation_kind)) return std::nullopt;
  return fmt::format("{} does not compute {}", implementation.name(), to_string(w.operation_kind));
}

} // namespace kibench
