#include "lib/export/yaml_writer.hpp"

#include <array>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "lib/json/canonical.hpp"

namespace kibench::exports {
namespace {

// Words a YAML 1.1 or 1.2 reader resolves to a boolean or null whatever
// their case.
constexpr std::array<std::string_view, 11> kResolvedWords = {"y",    "yes",   "n",    "no", "on", "off",
                                                             "true", "false", "null", "~",  "nan"};

bool lower_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != b[i]) return false;
  }
  return true;
}

// A key left plain: [A-Za-z][A-Za-z0-9_]* and not a resolved word.
bool plain_key(std::string_view key) {
  if (key.empty() || !((key[0] >= 'a' && key[0] <= 'z') || (key[0] >= 'A' && key[0] <= 'Z'))) return false;
  for (const char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  for (const std::string_view word : kResolvedWords) {
    if (lower_equal(key, word)) return false;
  }
  return true;
}

std::string key_text(std::string_view key) {
  return plain_key(key) ? std::string(key) : yaml_string(key);
}

bool is_scalar(const json::Value &value) {
  if (value.is_object()) return value.as_object().empty();
  if (value.is_array()) return value.as_array().empty();
  return true;
}

std::string scalar_text(const json::Value &value) {
  if (value.is_string()) return yaml_string(value.as_string());
  if (value.is_number()) return yaml_number(value.as_number());
  if (value.is_bool()) return value.as_bool() ? "true" : "false";
  if (value.is_null()) return "null";
  return value.is_object() ? "{}" : "[]";
}

void write(std::string &out, const json::Value &value, int indent);

// The members of an object; the first line's indentation is already written
// when `first_inline` (the object is an item of a sequence: "- key: ...").
void write_object(std::string &out, const json::Object &object, int indent, bool first_inline) {
  bool first = true;
  for (const auto &[key, member] : object) {
    if (!(first && first_inline)) out.append(static_cast<std::size_t>(indent), ' ');
    first = false;
    out += key_text(key) + ":";
    if (is_scalar(member)) {
      out += " " + scalar_text(member) + "\n";
    } else {
      out += "\n";
      write(out, member, indent + 2);
    }
  }
}

void write_array(std::string &out, const json::Array &array, int indent) {
  for (const json::Value &item : array) {
    out.append(static_cast<std::size_t>(indent), ' ');
    if (is_scalar(item)) {
      out += "- " + scalar_text(item) + "\n";
    } else if (item.is_object()) {
      out += "- ";
      write_object(out, item.as_object(), indent + 2, true);
    } else {
      out += "-\n";
      write(out, item, indent + 2);
    }
  }
}

void write(std::string &out, const json::Value &value, int indent) {
  if (is_scalar(value)) {
    out.append(static_cast<std::size_t>(indent), ' ');
    out += scalar_text(value) + "\n";
  } else if (value.is_object()) {
    write_object(out, value.as_object(), indent, false);
  } else {
    write_array(out, value.as_array(), indent);
  }
}

// The code point of the UTF-8 sequence at `text[at]` and its length; a
// byte that starts no valid sequence is itself (length 1).
std::pair<std::uint32_t, std::size_t> decode(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (length == 1 || at + length > text.size()) return {lead, 1};
  std::uint32_t code = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) code = (code << 6) | (byte(at + i) & 0x3F);
  return {code, length};
}

} // namespace

std::string yaml_string(std::string_view text) {
  std::string out = "\"";
  for (std::size_t at = 0; at < text.size();) {
    const auto [code, length] = decode(text, at);
    if (code == '"' || code == '\\') {
      out += '\\';
      out += static_cast<char>(code);
    } else if (code == '\n') {
      out += "\\n";
    } else if (code == '\t') {
      out += "\\t";
    } else if (code == '\r') {
      out += "\\r";
    } else if (code < 0x20 || code == 0x7F || (code >= 0x80 && code <= 0x9F) || code == 0x2028 ||
               code == 0x2029 || code == 0xFEFF) {
      out += fmt::format("\\u{:04x}", code);
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
  return out + "\"";
}

std::string yaml_number(double value) {
  if (std::isfinite(value) && std::floor(value) == value && std::fabs(value) < 9007199254740992.0)
    return fmt::format("{}", static_cast<std::int64_t>(value));
  std::string text = json::format_number(value);
  const std::size_t exponent = text.find('e');
  if (exponent == std::string::npos) return text; // "0.5": a float to both
  std::string mantissa = text.substr(0, exponent);
  std::string power = text.substr(exponent + 1);
  if (mantissa.find('.') == std::string::npos) mantissa += ".0";
  if (power.front() != '-' && power.front() != '+') power.insert(0, "+");
  return mantissa + "e" + power;
}

std::string yaml_block(const json::Value &value, int indent) {
  std::string out;
  write(out, value, indent);
  return out;
}

} // namespace kibench::exports
