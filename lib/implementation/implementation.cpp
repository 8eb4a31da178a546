#include "lib/implementation/implementation.hpp"

#include <fmt/format.h>

namespace kibench {

std::string_view to_string(Pass pass) {
  switch (pass) {
  case Pass::forward:
    return "forward";
  case Pass::backward:
    return "backward";
  case Pass::full:
    return "full";
  }
  return "full";
}

std::optional<Pass> pass_from_string(std::string_view text) {
  if (text == "forward") return Pass::forward;
  if (text == "backward") return Pass::backward;
  if (text == "full") return Pass::full;
  return std::nullopt;
}

std::optional<std::string> other_operation(const Implementation &implementation, const Workload &w) {
  if (implementation.runs(w.operation_kind)) return std::nullopt;
  return fmt::format("{} does not compute {}", implementation.name(), to_string(w.operation_kind));
}

} // namespace kibench
