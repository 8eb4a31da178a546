#include "lib/manifest/run_status.hpp"

#include <string>

#include "lib/enum_names.hpp"

namespace kibench {
namespace {

using enum RunStatus;

// In the schema's order.
constexpr EnumName<RunStatus> kNames[] = {
    {passed, "passed"},
    {incorrect_shape, "incorrect_shape"},
    {incorrect_dtype, "incorrect_dtype"},
    {incorrect_numerical, "incorrect_numerical"},
    {compile_error, "compile_error"},
    {runtime_error, "runtime_error"},
    {timeout, "timeout"},
    {resource_exceeded, "resource_exceeded"},
    {invalid_reference, "invalid_reference"},
    {policy_violation, "policy_violation"},
    {suspected_reward_hack, "suspected_reward_hack"},
    {incomplete_evidence, "incomplete_evidence"},
    {revoked, "revoked"},
};

} // namespace

std::string_view to_string(RunStatus status) {
  return name_in(kNames, status, "unknown");
}

std::optional<RunStatus> run_status_from_string(std::string_view text) {
  return value_named(kNames, text);
}

const std::string &run_status_names() {
  static const std::string names = names_joined(kNames);
  return names;
}

bool is_failure(RunStatus status) {
  return status != passed && status != incomplete_evidence;
}

} // namespace kibench
