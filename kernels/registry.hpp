// The one place implementations are listed. Adding one: a new file that
// defines its factory, and one line in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lib/implementation/implementation.hpp"

namespace kibench {

struct RegisteredImplementation {
  std::string name;
  std::string summary;    // one line for `kibench list`
  bool needs_gpu = false; // skipped, with the reason, on a machine without one
  bool is_oracle = false; // the fp64 references the others are checked against
  std::function<std::unique_ptr<Implementation>()> make;
  // Set for an implementation that spans the run's GPUs (kibench run
  // --gpus n): made for n of them; `make` then makes it for one.
  std::function<std::unique_ptr<Implementation>(int gpus)> make_for_gpus = {};
  // A lane that checks or dissects another (its data flow emulated on one
  // GPU, its collectives left out) rather than an implementation to
  // choose: `kibench list` marks it, and no default cohort takes it.
  bool is_diagnostic = false;
};

const std::vector<RegisteredImplementation> &implementation_registry();
const RegisteredImplementation *find_implementation(std::string_view name);

} // namespace kibench
