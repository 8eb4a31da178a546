// The KernelIndex manifest envelope and the naming rules it imposes.
#pragma once

#include <string>
#include <string_view>

#include "lib/json/value.hpp"

namespace kibench {

inline constexpr std::string_view kApiVersion = "kernelindex.dev/v1alpha1";

// {apiVersion, kind, metadata, spec}.
json::Value make_manifest(std::string_view kind, json::Object metadata, json::Object spec);

// Lowercase; every run of characters outside [a-z0-9] becomes '-'; dashes
// trimmed; at most 100 characters (KernelIndex's metadata.name rule).
std::string kebab(std::string_view text);

// Integer nanoseconds (KernelIndex normalizes durations to them), rounded
// half up.
std::int64_t round_ns(double ns);

} // namespace kibench
