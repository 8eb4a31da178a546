// The plugin catalog of one command: --plugin's libraries and the hosting
// program's in-process plugins; nullptr when there are none.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/kibench/cli.hpp"
#include "kernels/plugin/plugin_backend.hpp"

namespace kibench::cli {

inline std::shared_ptr<const plugin::PluginCatalog> plugin_catalog(const std::vector<std::string> &libraries,
                                                                   const CliContext &context,
                                                                   plugin::PluginRunSettings settings) {
  if (libraries.empty() && context.in_process.empty()) return nullptr;
  const std::vector<std::filesystem::path> paths(libraries.begin(), libraries.end());
  return std::make_shared<const plugin::PluginCatalog>(paths, context.in_process,
                                                       builtin_implementation_names(), settings);
}

} // namespace kibench::cli
