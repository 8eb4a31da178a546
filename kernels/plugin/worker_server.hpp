// The worker side of lib/worker/remote_implementation.hpp: `kibench
// worker` (and the Python package's worker, which hands its lanes in) runs
// one plugin implementation in process and answers kibench over the socket
// on descriptor 3 until told to exit or until kibench is gone.
#pragma once

#include <string>
#include <vector>

#include "kernels/plugin/plugin_catalog.hpp"

namespace kibench::plugin {

struct WorkerOptions {
  std::string lane;                   // the implementation's --impl name
  std::vector<std::string> libraries; // --plugin libraries to load
  PluginRunSettings settings;         // pass and timeout
};

// Returns the process's exit code: 0 when kibench said exit or closed the
// socket. Throws InputError when not started by kibench (no socket on
// descriptor 3) or when the lane is unknown.
int serve_worker(const WorkerOptions &options, const std::vector<InProcessPlugin> &in_process);

} // namespace kibench::plugin
