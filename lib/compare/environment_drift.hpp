// --allow-environment-drift: which differences between two
// ExecutionEnvironments a user may judge harmless, so that runs measured
// before and after a machine's routine update still rank in one cohort.
//
// The rule (kibench-environment-drift-v1), field by field of spec:
//
//   software.kernel                 the first two numbers (6.18) must match: the
//                                   patch level and a local suffix (6.18.44-fc-v1252)
//                                   may differ
//   software.driver                 the first number (the driver branch, 580) must
//                                   match: a release within the branch may differ
//   software.cudaToolkit            major.minor must match (13.0): a patch may differ
//   software.operatingSystem        the name and major.minor must match
//                                   ("Ubuntu 24.04"): a point release may differ
//   software.compiler               the name and major.minor must match ("gcc 12.2")
//   software.framework.version      major.minor must match (its name: exactly)
//   software.libraries.<name>       major.minor must match; cublaslt's integer
//                                   version (130100 = 13.1.0) is read as
//                                   major·10000 + minor·100 + patch
//   everything else                 exactly: hardware (vendor, product, architecture,
//                                   form factor, memory, count, interconnect), settings
//                                   (clocks locked, power limit, persistence, ECC,
//                                   environment variables), imageDigest, and a field
//                                   or library only one environment records
//
// "The first n numbers" are those of the first run of dot-separated digits
// in the value; the text before that run must match too. Two environments
// are drift-equivalent exactly when every field they differ in is tolerated,
// which is equality of their drift bodies below — so the relation is an
// equivalence and cohorts stay well defined.
#pragma once

#include <string>
#include <vector>

#include "lib/compare/field_difference.hpp"
#include "lib/json/value.hpp"

namespace kibench::compare {

inline constexpr std::string_view kEnvironmentDriftRule = "kibench-environment-drift-v1";

// Every field of the two environments' specs that differs, each marked
// whether the rule tolerates it. `a` and `b` are ExecutionEnvironment
// manifests.
std::vector<FieldDifference> environment_differences(const json::Value &a, const json::Value &b);

// True when the list is not empty and the rule tolerates every entry.
bool all_within_drift_rule(const std::vector<FieldDifference> &differences);

// The environment's equivalence key under the rule: the digest of its spec
// with each tolerant field reduced to what must match, and the rule's name.
std::string drift_equivalence_key(const json::Value &environment);

} // namespace kibench::compare
