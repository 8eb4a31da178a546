// An ExecutionEnvironment as a list of facts for the page: every scalar of
// its spec (and metadata.labels) under its dotted path, byte counts also
// in readable units. Whatever a producer records — GPU, driver, clocks,
// libraries — is shown without the report knowing its schema.
#pragma once

#include <string>

#include "lib/json/value.hpp"
#include "lib/report/report_model.hpp"

namespace kibench::report {

EnvironmentSection describe_environment(const std::string &digest, const std::string &name,
                                        const json::Value *manifest);

} // namespace kibench::report
