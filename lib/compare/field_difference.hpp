// One field two manifests set differently, named so a reader can act on
// it: "maxSamples 300 ≠ 1000", "software.driver 580.159.04 ≠ 575.57.08".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::compare {

struct FieldDifference {
  std::string field;  // a dotted path under spec ("measurement.warmupIterations") or a setting's name
  std::string first;  // the value in the first manifest, as shown; "absent" when it has none
  std::string second; // the same in the second
  // Environments only: whether --allow-environment-drift tolerates the
  // difference (lib/compare/environment_drift.hpp).
  bool within_drift_rule = false;
};

// The text shown for an absent field.
inline constexpr std::string_view kAbsent = "absent";

// "maxSamples 300 ≠ 1000"
std::string to_string(const FieldDifference &difference);
// "maxSamples 300 ≠ 1000, minTime 0.5 s ≠ 0 s"
std::string join(const std::vector<FieldDifference> &differences);

// A value as a difference shows it: strings as they are (made printable,
// long ones cut), numbers as JSON writes them, arrays and objects as
// canonical JSON.
std::string shown_value(const json::Value &value);

// Every leaf (a scalar, or an array as a whole) where `a` and `b` differ,
// by dotted path below `prefix`, in the order of `a`'s members and then the
// members only `b` has. Paths listed in `skip` are not compared.
std::vector<FieldDifference> leaf_differences(const json::Value &a, const json::Value &b,
                                              const std::vector<std::string> &skip = {},
                                              const std::string &prefix = {});

} // namespace kibench::compare
