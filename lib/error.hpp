// Error kinds that decide kibench's exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace kibench {

// Bad user input (a workload, manifest, CSV or flag): one line naming the
// file and the field, exit code 2, nothing written.
class InputError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A check that ran and failed (digest mismatch, regression gate): exit 1.
class CheckFailed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace kibench
