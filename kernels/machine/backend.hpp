// The machine's backend (lib/run/backend.hpp's Backend): the registry's
// implementations, the GPUs, the environment, clocks and power telemetry of
// this build. kernels/plugin/plugin_backend.hpp adds plugins beside the
// registry's.
#pragma once

#include <memory>

#include "lib/run/backend.hpp"

namespace kibench {

std::unique_ptr<Backend> make_backend();

} // namespace kibench
