#include "lib/harness/power_state.hpp"

namespace kibench {

std::string_view to_string(PowerState state) {
  switch (state) {
  case PowerState::rested:
    return "rested";
  case PowerState::loaded:
    return "loaded";
  case PowerState::as_is:
    break;
  }
  return "as-is";
}

std::optional<PowerState> power_state_from_string(std::string_view text) {
  for (const PowerState state : {PowerState::as_is, PowerState::rested, PowerState::loaded})
    if (text == to_string(state)) return state;
  return std::nullopt;
}

} // namespace kibench
