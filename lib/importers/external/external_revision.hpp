// The ImplementationRevision of an implementation kibench does not have,
// from what the external result says about it (title, description,
// project, callable, software), in the shape of kibench's own revisions.
#pragma once

#include <string>

#include "lib/importers/external/implementation_entry.hpp"
#include "lib/json/value.hpp"

namespace kibench::importers::external {

// `entry.description` must be set; `operation_digest` is the OperationSpec
// the workload computes.
json::Value external_revision(const ImplementationEntry &entry, const std::string &operation_digest);

} // namespace kibench::importers::external
