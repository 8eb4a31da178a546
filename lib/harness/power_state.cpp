#include "lib/harness/power_state.hpp"

#include "lib/enum_names.hpp"

namespace kibench {

namespace {
constexpr EnumName<PowerState> kPowerStateNames[] = {
    {PowerState::as_is, "as-is"}, {PowerState::rested, "rested"}, {PowerState::loaded, "loaded"}};
} // namespace

std::string_view to_string(PowerState state) {
  return name_in(kPowerStateNames, state, "as-is");
}

std::optional<PowerState> power_state_from_string(std::string_view text) {
  return value_named(kPowerStateNames, text);
}

std::string power_state_names() {
  return names_listed(kPowerStateNames);
}

} // namespace kibench
