#include "lib/manifest/run_status.hpp"

#include <array>
#include <string>
#include <utility>

namespace kibench {
namespace {

using enum RunStatus;

// In the schema's order.
constexpr std::array<std::pair<RunStatus, std::string_view>, 13> kNames{{
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
}};

} // namespace

std::string_view to_string(RunStatus status) {
  for (const auto &[value, name] : kNames)
    if (value == status) return name;
  return "unknown";
}

std::optional<RunStatus> run_status_from_string(std::string_view text) {
  for (const auto &[value, name] : kNames)
    if (name == text) return value;
  return std::nullopt;
}

const std::string &run_status_names() {
  static const std::string names = [] {
    std::string out;
    for (const auto &[value, name] : kNames) out += std::string(out.empty() ? "" : ", ") + std::string(name);
    return out;
  }();
  return names;
}

bool is_failure(RunStatus status) {
  return status != passed && status != incomplete_evidence;
}

} // namespace kibench
