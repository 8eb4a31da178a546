// The machine's backend with plugin implementations beside the registry's
// (`kibench run --plugin`, the Python package's lanes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/machine/backend.hpp"
#include "kernels/plugin/plugin_catalog.hpp"
#include "lib/run/backend.hpp"

namespace kibench {

// `run_gpus`: kibench run --gpus (Backend::run_gpus).
std::unique_ptr<Backend> make_backend(std::shared_ptr<const plugin::PluginCatalog> plugins, int run_gpus = 1);

// The registry's names, which no plugin may take.
std::vector<std::string> builtin_implementation_names();

} // namespace kibench
