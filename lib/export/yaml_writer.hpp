// JSON values as block-style YAML that YAML 1.2 (KernelIndex's parser,
// core schema) and YAML 1.1 readers both read back as the same JSON:
// every string is double-quoted (so "079035" or "296e61495673" stay
// strings, and "yes", "null" or "1e3" are never read as anything else),
// keys too unless they are plain identifiers no reader resolves, numbers
// in a form both schemas take as numbers.
#pragma once

#include <string>
#include <string_view>

#include "lib/json/value.hpp"

namespace kibench::exports {

// A double-quoted YAML scalar: JSON escapes, plus \u escapes for DEL, the
// C1 controls, U+2028, U+2029 and U+FEFF (characters YAML 1.1 streams may
// not hold unescaped).
std::string yaml_string(std::string_view text);

// A number as YAML 1.2 core and YAML 1.1 both resolve it: an integer
// written plainly; otherwise with a decimal point and a signed exponent
// where it has one ("1.0e-7", not "1e-7", which YAML 1.1 reads as a
// string).
std::string yaml_number(double value);

// `value` as the lines of a block node indented by `indent` spaces, each
// ending in '\n'. A scalar or empty collection is one line ("{}", "[]").
std::string yaml_block(const json::Value &value, int indent = 0);

} // namespace kibench::exports
