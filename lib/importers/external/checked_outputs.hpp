// The outputs kibench's correctness check compares, so that an external
// harness's errors can be held to the same list.
#pragma once

#include <string>
#include <vector>

#include "lib/implementation/implementation.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::importers::external {

// In the order Backend::compare lists them (kernels/machine/backend.cpp): the loss
// always (a backward-pass check runs the full pass, loss included), the
// student gradients unless the pass is forward, grad_student_bias only for
// a workload with a student bias.
std::vector<std::string> checked_outputs(const Workload &workload, Pass pass);

} // namespace kibench::importers::external
