#include "lib/implementation/implementation.hpp"

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

} // namespace kibench
