// An implementation that runs in a worker process of its own
// (KernelIndex ENGINEERING_DESIGN §17.6: foreign code in a child process).
// Everything it states about itself (name, revision, operations, what it
// cannot run) comes from `description`, an in-process copy that is never
// prepared; everything that runs its code goes over a socket to a worker
// started for each prepare() and ended at release(): a fresh process for
// the check and another for the timing, so no state survives from one to
// the other.
//
// The worker (kernels/plugin/worker_server.hpp) generates the workload's
// inputs itself, from kibench's own generators, and proves they are
// kibench's by their fingerprints; it times each sample with kibench's own
// timer around the call (start, run, stop in one request, so the socket is
// never inside the timed interval); it checks its copy of the inputs after
// every call; and it copies the outputs into shared memory, where this
// process compares them. A crash, a signal, exit() or os._exit(), a hang or
// a closed socket fails the lane alone, with how the worker ended.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/implementation/implementation.hpp"

namespace kibench::worker {

struct WorkerLaunch {
  std::vector<std::string> argv; // the worker's program and arguments
  double timeout_s = 60.0;       // --timeout: one call's limit (prepare gets 10 times it)
};

// What an implementation in a worker offers beyond Implementation: its
// inputs are its own, so kibench tells it which input set to hold.
class OwnInputs {
public:
  virtual ~OwnInputs() = default;
  // Generates input set `variant` (InputSet::set_variant) in place in the
  // worker, untimed; nothing when it holds that one already.
  virtual void use_input_variant(int variant) = 0;
};

std::unique_ptr<Implementation> make_remote_implementation(std::unique_ptr<Implementation> description,
                                                           WorkerLaunch launch);

// Startup and preparing may import a framework and compile (torch, Triton):
// prepare's limit is this many times --timeout, plus kStartupAllowanceS.
inline constexpr double kPrepareAllowance = 10.0;
inline constexpr double kStartupAllowanceS = 30.0;

} // namespace kibench::worker
