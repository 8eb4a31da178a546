// Each enum's names as one table (lib/enum_names.hpp), read both ways; a
// choice flag's refusal lists the names from its enum's own table, so a
// new value reaches the message.
#include <catch2/catch.hpp>

#include "kernels/plugin/plugin_catalog.hpp"
#include "lib/enum_names.hpp"
#include "lib/environment/clock_control.hpp"
#include "lib/harness/power_state.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/implementation/implementation.hpp"

TEST_CASE("a choice flag's refusal lists the names of its enum's own table", "[flags][enum_names]") {
  enum class One { a };
  enum class Three { a, b, c };
  constexpr kibench::EnumName<One> one[] = {{One::a, "a"}};
  constexpr kibench::EnumName<Three> three[] = {{Three::a, "a"}, {Three::b, "b"}, {Three::c, "c"}};
  CHECK(kibench::names_listed(one) == "a");
  CHECK(kibench::names_listed(three) == "a, b or c");
  CHECK(kibench::pass_names() == "forward, backward or full");
  CHECK(kibench::input_rotation_names() == "auto or off");
  CHECK(kibench::clock_target_names() == "base or max");
  CHECK(kibench::power_state_names() == "as-is, rested or loaded");
  CHECK(kibench::plugin::isolation_names() == "auto, process or in-process");
  // Every listed name reads back.
  for (const char *name : {"forward", "backward", "full"}) CHECK(kibench::pass_from_string(name).has_value());
}
