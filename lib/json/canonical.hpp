// RFC 8785 (JSON Canonicalization Scheme) and a readable writer.
#pragma once

#include <string>

#include "lib/json/value.hpp"

namespace kibench::json {

// ECMAScript Number.prototype.toString of a finite double: shortest
// round-trip digits, plain notation for 1e-6 <= |x| < 1e21, else d.ddde±n;
// -0 prints "0". Throws std::invalid_argument for NaN or Infinity.
std::string format_number(double x);

// The JCS serialization: no whitespace, keys sorted by UTF-16 code units,
// minimal string escapes. Throws std::invalid_argument on non-finite numbers.
std::string canonical(const Value &value);

// Indented, insertion-ordered JSON for files people read; numbers as in JCS.
std::string pretty(const Value &value, int indent = 2);

} // namespace kibench::json
