#include "lib/json/parse.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <unordered_set>

#include <fmt/core.h>
#include <simdjson.h>

#include "lib/error.hpp"

namespace kibench::json {
namespace {

// A member name that can follow a dot in a JSON path ($.spec.axes); anything
// else is written as a quoted subscript ($["odd key"]).
bool is_plain_identifier(std::string_view key) {
  if (key.empty()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(letter || (digit && i > 0) || c == '-')) return false;
  }
  return true;
}

std::string member_path(const std::string &parent, std::string_view key) {
  if (is_plain_identifier(key)) return fmt::format("{}.{}", parent, key);
  std::string quoted;
  for (const char c : key) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c);
  }
  return fmt::format("{}[\"{}\"]", parent, quoted);
}

// Builds a json::Value from simdjson's DOM tape. The tape keeps every member
// of an object, duplicates included, so duplicate keys are caught here.
class Converter {
public:
  explicit Converter(std::string_view source) : source_(source) {}

  Value convert(simdjson::dom::element element, const std::string &path) const {
    using simdjson::dom::element_type;
    switch (element.type()) {
    case element_type::NULL_VALUE:
      return Value(nullptr);
    case element_type::BOOL:
      return Value(bool(element.get_bool().value_unsafe()));
    case element_type::INT64:
      return Value(element.get_int64().value_unsafe());
    case element_type::UINT64:
      return Value(element.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return Value(element.get_double().value_unsafe());
    case element_type::STRING:
      return Value(std::string_view(element.get_string().value_unsafe()));
    case element_type::ARRAY:
      return convert_array(element.get_array().value_unsafe(), path);
    case element_type::OBJECT:
      return convert_object(element.get_object().value_unsafe(), path);
    }
    fail(path, "unsupported JSON value");
  }

private:
  [[noreturn]] void fail(const std::string &path, std::string_view problem) const {
    throw InputError(fmt::format("{}: {}: {}", source_, path, problem));
  }

  Value convert_array(simdjson::dom::array array, const std::string &path) const {
    Array out;
    out.reserve(array.size());
    std::size_t index = 0;
    for (simdjson::dom::element item : array) {
      out.push_back(convert(item, fmt::format("{}[{}]", path, index)));
      ++index;
    }
    return Value(std::move(out));
  }

  Value convert_object(simdjson::dom::object object, const std::string &path) const {
    Object out;
    std::unordered_set<std::string_view> seen;
    for (simdjson::dom::key_value_pair member : object) {
      if (!seen.insert(member.key).second) {
        // The key is escaped so the message stays on one line.
        std::string shown;
        for (char ch : member.key) {
          if (static_cast<unsigned char>(ch) < 0x20)
            shown += fmt::format("\\u{:04x}", static_cast<int>(ch));
          else
            shown.push_back(ch);
        }
        fail(path, fmt::format("duplicate key \"{}\"", shown));
      }
      out.set(std::string(member.key), convert(member.value, member_path(path, member.key)));
    }
    return Value(std::move(out));
  }

  std::string_view source_;
};

// JSON numbers are doubles here (RFC 8785), but simdjson refuses integer
// literals beyond 64 bits, which JCS itself writes (1e20 serializes as
// 100000000000000000000). Such literals are rewritten with a ".0" suffix,
// which denotes the same double, and the text parsed again.
std::string widen_big_integers(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[i + 1]);
        i += 2;
        continue;
      }
      in_string = c != '"';
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i + (c == '-' ? 1 : 0);
      while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
      const bool integer = end >= text.size() || (text[end] != '.' && text[end] != 'e' && text[end] != 'E');
      out.append(text.substr(i, end - i));
      if (integer && end - i > 18) out.append(".0");
      i = end;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

} // namespace

Value parse(std::string_view text, std::string_view source) {
  // One parser per thread: it owns reusable buffers sized to the largest
  // document seen so far.
  thread_local simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::element root;
  auto error = parser.parse(padded).get(root);
  if (error == simdjson::NUMBER_ERROR) {
    const simdjson::padded_string widened(widen_big_integers(text));
    error = parser.parse(widened).get(root);
  }
  if (error != simdjson::SUCCESS) {
    throw InputError(fmt::format("{}: $: invalid JSON: {}", source, simdjson::error_message(error)));
  }
  return Converter(source).convert(root, "$");
}

Value parse_file(const std::filesystem::path &path) {
  // A directory opens on Linux but reads nothing; say so rather than
  // reporting it as empty JSON.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw InputError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(EISDIR)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  return parse(text, path.string());
}

} // namespace kibench::json
