// One registry name for an implementation of several operations: each
// operation has its own Implementation, and the switch forwards every call
// to the one for the workload it was prepared with (cpu-fp64, say, is the
// oracle of distill_jsd_loss, jsd and fused_linear_jsd alike).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "lib/implementation/implementation.hpp"

namespace kibench {

// `parts` maps each operation to the implementation that computes it; the
// first (in OperationKind order) answers for the switch before prepare().
// Every part must report `name` as its own.
std::unique_ptr<Implementation>
make_operation_switch(std::string name, std::map<OperationKind, std::unique_ptr<Implementation>> parts);

} // namespace kibench
