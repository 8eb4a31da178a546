#include "lib/compare/reason_code.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/compare/environment_drift.hpp"
#include "lib/compare/protocol_differences.hpp"
#include "lib/enum_names.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::compare {
namespace {

// "sha256:0123456789ab…": enough of a digest to tell two apart on screen.
std::string short_digest(const std::string &digest) {
  constexpr std::size_t shown = std::string_view("sha256:").size() + 12;
  return digest.size() > shown ? digest.substr(0, shown) + "…" : digest;
}

// Names when they differ, else the digests (same name, edited content).
std::string names_or_digests(const std::string &name_a, const std::string &digest_a,
                             const std::string &name_b, const std::string &digest_b) {
  if (name_a != name_b) return fmt::format("{} vs {}", name_a, name_b);
  return fmt::format("{} ({} vs {})", name_a, short_digest(digest_a), short_digest(digest_b));
}

// The fields --allow-environment-drift does not tolerate: "hardware.product, software.driver".
std::string beyond_drift_rule(const std::vector<FieldDifference> &differences) {
  std::vector<std::string> fields;
  for (const auto &difference : differences) {
    if (!difference.within_drift_rule) fields.push_back(difference.field);
  }
  return fmt::format("{}", fmt::join(fields, ", "));
}

std::string comparator_of(const json::Value &correctness) {
  const json::Value *comparator = correctness.find("comparator");
  return comparator != nullptr && comparator->is_string() ? comparator->as_string() : "?";
}

} // namespace

std::string_view to_string(ReasonCode code) {
  static constexpr EnumName<ReasonCode> kNames[] = {
      {ReasonCode::operation_mismatch, "OPERATION_MISMATCH"},
      {ReasonCode::workload_mismatch, "WORKLOAD_MISMATCH"},
      {ReasonCode::protocol_incomparable, "PROTOCOL_INCOMPARABLE"},
      {ReasonCode::environment_mismatch, "ENVIRONMENT_MISMATCH"},
      {ReasonCode::correctness_policy_mismatch, "CORRECTNESS_POLICY_MISMATCH"},
      {ReasonCode::metric_mismatch, "METRIC_MISMATCH"},
      {ReasonCode::status_not_passed, "STATUS_NOT_PASSED"},
      {ReasonCode::missing_raw_samples, "MISSING_RAW_SAMPLES"}};
  return name_in(kNames, code, "UNKNOWN");
}

std::vector<Reason> reasons_between(const ComparedRun &a, const ComparedRun &b) {
  std::vector<Reason> out;
  if (a.operation_digest != b.operation_digest) {
    out.push_back(
        {ReasonCode::operation_mismatch, fmt::format("operation {} vs {}", short_digest(a.operation_digest),
                                                     short_digest(b.operation_digest))});
  }
  if (a.workload_digest != b.workload_digest) {
    out.push_back(
        {ReasonCode::workload_mismatch, "workload " + names_or_digests(a.workload_name, a.workload_digest,
                                                                       b.workload_name, b.workload_digest)});
  }
  if (a.protocol_digest != b.protocol_digest) {
    Reason reason{ReasonCode::protocol_incomparable,
                  "protocol " + names_or_digests(a.protocol_name, a.protocol_digest, b.protocol_name,
                                                 b.protocol_digest),
                  protocol_differences(a.protocol, b.protocol)};
    if (!reason.differences.empty()) reason.detail += ": " + join(reason.differences);
    out.push_back(std::move(reason));
  }
  if (a.environment_digest != b.environment_digest) {
    Reason reason{ReasonCode::environment_mismatch,
                  "environment " + names_or_digests(a.environment_name, a.environment_digest,
                                                    b.environment_name, b.environment_digest),
                  environment_differences(a.environment, b.environment)};
    if (!reason.differences.empty()) {
      reason.detail += ": " + join(reason.differences);
      reason.detail += all_within_drift_rule(reason.differences)
                           ? " (each within the environment drift rule: --allow-environment-drift ranks "
                             "them together)"
                           : fmt::format(" (beyond the environment drift rule: {})",
                                         beyond_drift_rule(reason.differences));
    }
    out.push_back(std::move(reason));
  }
  if (a.correctness != b.correctness) {
    const std::string comparator_a = comparator_of(a.correctness);
    const std::string comparator_b = comparator_of(b.correctness);
    out.push_back({ReasonCode::correctness_policy_mismatch,
                   comparator_a != comparator_b
                       ? fmt::format("correctness comparator {} vs {}", comparator_a, comparator_b)
                       : fmt::format("correctness policy {} vs {}", json::canonical(a.correctness),
                                     json::canonical(b.correctness))});
  }
  if (a.metric != b.metric) {
    out.push_back({ReasonCode::metric_mismatch, fmt::format("metric {} vs {}", a.metric, b.metric)});
  }
  // A run described against itself (a cohort's reference point) is
  // listed once.
  const std::vector<const ComparedRun *> both =
      &a == &b ? std::vector<const ComparedRun *>{&a} : std::vector<const ComparedRun *>{&a, &b};
  std::vector<std::string> not_passed;
  for (const ComparedRun *run : both) {
    if (run->status != RunStatus::passed)
      not_passed.push_back(fmt::format("{} has status {}", run->id, to_string(run->status)));
  }
  if (!not_passed.empty()) {
    out.push_back({ReasonCode::status_not_passed, fmt::format("{}", fmt::join(not_passed, "; "))});
  }
  std::vector<std::string> missing;
  for (const ComparedRun *run : both) {
    if (!run->raw) missing.push_back(fmt::format("{}: {}", run->id, run->raw_missing));
  }
  if (!missing.empty()) {
    out.push_back({ReasonCode::missing_raw_samples, fmt::format("{}", fmt::join(missing, "; "))});
  }
  return out;
}

bool differs_in_key(const std::vector<Reason> &reasons) {
  return std::any_of(reasons.begin(), reasons.end(), [](const Reason &r) {
    return r.code != ReasonCode::status_not_passed && r.code != ReasonCode::missing_raw_samples;
  });
}

} // namespace kibench::compare
