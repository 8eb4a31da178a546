// A plugin implementation (kibench_plugin.h) as an Implementation: on the
// GPU a GpuImplementation, so the plugin runs on kibench's stream and is
// timed by kibench's CUDA events, flushed by its L2 flush and read by its
// power monitor like the built-ins; on the CPU a HostImplementation, timed
// by the steady clock. Before the check, kibench fills every output the
// plugin exposes with 0xFF bytes and calls its poison(), if any.
#pragma once

#include <memory>

#include "kernels/plugin/plugin_catalog.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench::plugin {

std::unique_ptr<Implementation> make_plugin_implementation(std::shared_ptr<const PluginEntry> entry,
                                                           const PluginRunSettings &settings);

} // namespace kibench::plugin
