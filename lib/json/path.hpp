// Reading members of parsed manifests by dotted path ("spec.timing.rawSamples").
#pragma once

#include <string>
#include <string_view>

#include "lib/json/value.hpp"

namespace kibench::json {

// The member at a dotted path, or nullptr when any step is absent.
const Value *member_at(const Value &value, std::string_view dotted_path);

// The string there, or nullptr when it is absent or not a string.
const std::string *find_string_at(const Value &value, std::string_view dotted_path);

// The string there, or "" when it is absent or not a string.
std::string string_at(const Value &value, std::string_view dotted_path);

} // namespace kibench::json
