// An implementation that failed at something other than the correctness
// check: it raised an error, returned outputs of the wrong shape or type,
// ran past the timeout or out of memory. `kibench run` records the lane
// with this status and reason and measures the others; any other exception
// from a lane is recorded as runtime_error.
#pragma once

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

} // namespace kibench
