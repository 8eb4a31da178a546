// The plugin catalog of one command: --plugin's libraries and the hosting
// program's in-process plugins; nullptr when there are none.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/kibench/cli.hpp"
#include "kernels/plugin/plugin_backend.hpp"
#include "lib/error.hpp"

namespace kibench::cli {

inline std::shared_ptr<const plugin::PluginCatalog> plugin_catalog(const std::vector<std::string> &libraries,
                                                                   const CliContext &context,
                                                                   plugin::PluginRunSettings settings) {
  if (libraries.empty() && context.in_process.empty()) return nullptr;
  settings.worker_command = context.worker_command;
  if (settings.isolation == plugin::Isolation::process && settings.worker_command.empty())
    throw InputError("--isolation process: this program starts no worker processes (run the kibench executable "
                     "or python -m kibench)");
  const std::vector<std::filesystem::path> paths(libraries.begin(), libraries.end());
  return std::make_shared<const plugin::PluginCatalog>(paths, context.in_process,
                                                       builtin_implementation_names(), settings);
}

} // namespace kibench::cli
