#include "lib/json/canonical.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/core.h>

#include "lib/io/text_rules.hpp"

namespace kibench::json {
namespace {

// The shortest decimal digits that round-trip to x (|x| > 0, finite) and the
// decimal exponent n such that |x| = 0.d1d2...dk × 10^n, as ECMAScript's
// Number::toString names them.
struct ShortestDecimal {
  std::string digits;
  int point = 0; // n
};

ShortestDecimal shortest_decimal(double magnitude) {
  // std::to_chars without a precision yields the shortest representation
  // that round-trips, choosing the closest one when several are that short,
  // which is exactly the digit string ECMAScript asks for. Scientific form
  // gives d[.ddd]e±XX.
  std::array<char, 64> buffer{};
  const auto [end, error] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), magnitude, std::chars_format::scientific);
  if (error != std::errc{}) throw std::invalid_argument("cannot format number");
  const std::string_view text(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  const std::size_t e = text.find('e');
  ShortestDecimal out;
  for (const char c : text.substr(0, e)) {
    if (c != '.') out.digits.push_back(c);
  }
  int exponent = 0;
  std::string_view exponent_text = text.substr(e + 1);
  if (exponent_text.front() == '+') exponent_text.remove_prefix(1);
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
  // d.ddd × 10^e = 0.dddd × 10^(e+1)
  out.point = exponent + 1;
  return out;
}

// Every string kibench writes is UTF-8: bytes that are not (a plugin's
// message, a reason cut by another program) become U+FFFD here, so one bad
// string never makes a whole run directory unreadable. The canonical form
// and the readable one repair alike, so a digest computed before writing
// matches the one recomputed from the file.
void append_escaped_string(std::string &out, std::string_view raw) {
  std::string repaired;
  std::string_view text = raw;
  if (!io::is_utf8(raw)) {
    repaired = io::repair_utf8(raw);
    text = repaired;
  }
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      } else {
        out.push_back(c); // everything else, multi-byte UTF-8 included, is literal
      }
    }
  }
  out.push_back('"');
}

// Decodes UTF-8 into UTF-16 code units: RFC 8785 orders object keys by
// these, which differs from code point (and UTF-8 byte) order exactly when
// a character above U+FFFF (a surrogate pair, 0xD800..0xDBFF first) meets
// one in U+E000..U+FFFF.
std::u16string utf16_code_units(std::string_view utf8) {
  std::u16string out;
  out.reserve(utf8.size());
  std::size_t i = 0;
  const auto byte = [&](std::size_t at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(utf8[at]));
  };
  const auto invalid = [&]() -> std::invalid_argument {
    return std::invalid_argument(fmt::format("invalid UTF-8 in object key at byte {}", i));
  };
  while (i < utf8.size()) {
    const std::uint32_t lead = byte(i);
    std::uint32_t code_point = 0;
    std::size_t length = 0;
    if (lead < 0x80) {
      code_point = lead;
      length = 1;
    } else if ((lead & 0xE0) == 0xC0) {
      code_point = lead & 0x1F;
      length = 2;
    } else if ((lead & 0xF0) == 0xE0) {
      code_point = lead & 0x0F;
      length = 3;
    } else if ((lead & 0xF8) == 0xF0) {
      code_point = lead & 0x07;
      length = 4;
    } else {
      throw invalid();
    }
    if (i + length > utf8.size()) throw invalid();
    for (std::size_t k = 1; k < length; ++k) {
      const std::uint32_t continuation = byte(i + k);
      if ((continuation & 0xC0) != 0x80) throw invalid();
      code_point = (code_point << 6) | (continuation & 0x3F);
    }
    static constexpr std::array<std::uint32_t, 5> smallest_for_length{0, 0, 0x80, 0x800, 0x10000};
    if (code_point < smallest_for_length[length] || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      throw invalid();
    }
    if (code_point >= 0x10000) {
      const std::uint32_t offset = code_point - 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (offset >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (offset & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(code_point));
    }
    i += length;
  }
  return out;
}

void append_canonical(std::string &out, const Value &value);

void append_canonical_object(std::string &out, const Object &object) {
  struct Keyed {
    std::u16string order;
    const Object::Member *member;
  };
  std::vector<Keyed> members;
  members.reserve(object.size());
  for (const auto &member : object)
    members.push_back({utf16_code_units(io::repair_utf8(member.first)), &member});
  std::sort(members.begin(), members.end(), [](const Keyed &a, const Keyed &b) { return a.order < b.order; });
  out.push_back('{');
  bool first = true;
  for (const auto &[order, member] : members) {
    if (!first) out.push_back(',');
    first = false;
    append_escaped_string(out, member->first);
    out.push_back(':');
    append_canonical(out, member->second);
  }
  out.push_back('}');
}

void append_canonical(std::string &out, const Value &value) {
  if (value.is_null()) {
    out += "null";
  } else if (value.is_bool()) {
    out += value.as_bool() ? "true" : "false";
  } else if (value.is_number()) {
    out += format_number(value.as_number());
  } else if (value.is_string()) {
    append_escaped_string(out, value.as_string());
  } else if (value.is_array()) {
    out.push_back('[');
    bool first = true;
    for (const Value &item : value.as_array()) {
      if (!first) out.push_back(',');
      first = false;
      append_canonical(out, item);
    }
    out.push_back(']');
  } else {
    append_canonical_object(out, value.as_object());
  }
}

void append_pretty(std::string &out, const Value &value, int indent, int depth) {
  const auto newline = [&](int level) {
    out.push_back('\n');
    out.append(static_cast<std::size_t>(indent * level), ' ');
  };
  if (value.is_array()) {
    const Array &array = value.as_array();
    if (array.empty()) {
      out += "[]";
      return;
    }
    out.push_back('[');
    bool first = true;
    for (const Value &item : array) {
      if (!first) out.push_back(',');
      first = false;
      newline(depth + 1);
      append_pretty(out, item, indent, depth + 1);
    }
    newline(depth);
    out.push_back(']');
  } else if (value.is_object()) {
    const Object &object = value.as_object();
    if (object.empty()) {
      out += "{}";
      return;
    }
    out.push_back('{');
    bool first = true;
    for (const auto &[key, member] : object) {
      if (!first) out.push_back(',');
      first = false;
      newline(depth + 1);
      append_escaped_string(out, key);
      out += ": ";
      append_pretty(out, member, indent, depth + 1);
    }
    newline(depth);
    out.push_back('}');
  } else {
    append_canonical(out, value); // scalars print the same either way
  }
}

} // namespace

std::string format_number(double x) {
  if (!std::isfinite(x)) {
    throw std::invalid_argument(fmt::format("{} cannot be written as JSON", x));
  }
  if (x == 0.0) return "0"; // both +0 and -0
  const ShortestDecimal decimal = shortest_decimal(std::fabs(x));
  const std::string &d = decimal.digits;
  const int k = static_cast<int>(d.size());
  const int n = decimal.point;
  std::string out = x < 0 ? "-" : "";
  if (k <= n && n <= 21) {
    // An integer: the digits, then n - k zeros.
    out += d;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    // A point inside the digits.
    out += d.substr(0, static_cast<std::size_t>(n));
    out.push_back('.');
    out += d.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    // 1e-6 <= |x| < 1: "0." then -n zeros, then the digits.
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += d;
  } else {
    // Exponential: d[.ddd]e±(n-1).
    out.push_back(d.front());
    if (k > 1) {
      out.push_back('.');
      out += d.substr(1);
    }
    const int exponent = n - 1;
    out += exponent < 0 ? "e-" : "e+";
    out += std::to_string(exponent < 0 ? -exponent : exponent);
  }
  return out;
}

std::string canonical(const Value &value) {
  std::string out;
  append_canonical(out, value);
  return out;
}

std::string pretty(const Value &value, int indent) {
  std::string out;
  append_pretty(out, value, indent, 0);
  return out;
}

} // namespace kibench::json
