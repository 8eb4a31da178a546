// kibench env: the ExecutionEnvironment manifest of this machine.
#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "kernels/machine/backend.hpp"
#include "lib/digest/digest.hpp"
#include "lib/json/canonical.hpp"
#include "lib/run/backend.hpp"

namespace kibench::cli {

void add_env(CLI::App &app, Action &action) {
  auto canonical_only = std::make_shared<bool>(false);
  CLI::App *env = app.add_subcommand("env", "Print this machine's ExecutionEnvironment manifest and digest");
  env->add_flag("--canonical", *canonical_only, "Print the RFC 8785 form instead of indented JSON");
  env->footer("Examples:\n  kibench env\n  kibench env --canonical | sha256sum");
  env->callback([canonical_only, &action] {
    action = [canonical_only] {
      const auto manifest = environment_manifest(make_backend()->environment());
      if (*canonical_only) {
        fmt::print("{}\n", json::canonical(manifest));
      } else {
        fmt::print("{}\n", json::pretty(manifest));
        fmt::print(stderr, "digest: {}\n", manifest_digest(manifest));
      }
      return 0;
    };
  });
}

} // namespace kibench::cli
