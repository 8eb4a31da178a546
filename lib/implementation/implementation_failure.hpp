// An implementation that failed at something other than the correctness
// check: it raised an error, returned outputs of the wrong shape or type,
// ran past the timeout or out of memory. `kibench run` records the lane
// with this status and reason and measures the others; any other exception
// from a lane is recorded as runtime_error.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "lib/manifest/run_status.hpp"

namespace kibench {

class ImplementationFailure : public std::runtime_error {
public:
  ImplementationFailure(RunStatus status, const std::string &reason)
      : std::runtime_error(reason), status_(status) {}
  [[nodiscard]] RunStatus status() const { return status_; }

private:
  RunStatus status_;
};

// A lane's failure as recorded: its status and one-line reason.
struct LaneFailure {
  RunStatus status = RunStatus::runtime_error;
  std::string reason;
};

// What an exception from an implementation stands for: an
// ImplementationFailure's own status, resource_exceeded for host memory,
// runtime_error for anything else (a CUDA error, say).
inline LaneFailure failure_of(const std::exception &e) {
  if (const auto *f = dynamic_cast<const ImplementationFailure *>(&e)) return {f->status(), f->what()};
  if (dynamic_cast<const std::bad_alloc *>(&e) != nullptr)
    return {RunStatus::resource_exceeded, "out of host memory"};
  return {RunStatus::runtime_error, e.what()};
}

} // namespace kibench
