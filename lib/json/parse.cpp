#include "lib/json/parse.hpp"

#include <optional>
#include <unordered_set>

#include <fmt/core.h>
#include <simdjson.h>

#include "lib/error.hpp"
#include "lib/io/input_file.hpp"
#include "lib/io/text_rules.hpp"

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
// which denotes the same double, and the text parsed again. Only a whole
// number token counts: the digits of a fraction or an exponent are not an
// integer literal of their own (0.0012345678901234567 stays as it is).
std::string widen_big_integers(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  const auto digits_from = [&](std::size_t at) {
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return at;
  };
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
      // -?digits(.digits)?([eE][+-]?digits)?
      const std::size_t integer_start = i + (c == '-' ? 1 : 0);
      const std::size_t integer_end = digits_from(integer_start);
      std::size_t end = integer_end;
      if (end < text.size() && text[end] == '.') end = digits_from(end + 1);
      if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
        ++end;
        if (end < text.size() && (text[end] == '+' || text[end] == '-')) ++end;
        end = digits_from(end);
      }
      out.append(text.substr(i, end - i));
      if (end == integer_end && integer_end - integer_start > 18) out.append(".0");
      i = end;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

// "line 3, column 7" of a byte offset (columns count bytes, from 1).
std::string position_of(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

// What is wrong with text that is not UTF-8 JSON at all: a byte order mark,
// UTF-16 or UTF-32 (told by a BOM, or by the NUL bytes ASCII takes there),
// a byte that is not UTF-8. nullopt when the encoding is fine.
std::optional<std::string> encoding_problem(std::string_view text) {
  const auto starts = [&](std::string_view prefix) { return text.starts_with(prefix); };
  using namespace std::string_view_literals;
  if (starts("\xEF\xBB\xBF"sv))
    return "a UTF-8 byte order mark (EF BB BF) at byte 0; save the file as UTF-8 without one";
  if (starts("\x00\x00\xFE\xFF"sv))
    return "UTF-32 big-endian text (byte order mark 00 00 FE FF at byte 0); JSON must be UTF-8";
  if (starts("\xFF\xFE\x00\x00"sv))
    return "UTF-32 little-endian text (byte order mark FF FE 00 00 at byte 0); JSON must be UTF-8";
  if (starts("\xFE\xFF"sv))
    return "UTF-16 big-endian text (byte order mark FE FF at byte 0); JSON must be UTF-8";
  if (starts("\xFF\xFE"sv))
    return "UTF-16 little-endian text (byte order mark FF FE at byte 0); JSON must be UTF-8";
  // JSON text starts with an ASCII character: in UTF-16 or UTF-32 without a
  // byte order mark, NULs stand beside it (RFC 4627, section 3).
  if (text.size() >= 4 && text[0] == 0 && text[1] == 0 && text[2] == 0 && text[3] != 0)
    return "UTF-32 big-endian text (NUL bytes from byte 0, no byte order mark); JSON must be UTF-8";
  if (text.size() >= 4 && text[0] != 0 && text[1] == 0 && text[2] == 0 && text[3] == 0)
    return "UTF-32 little-endian text (NUL bytes from byte 1, no byte order mark); JSON must be UTF-8";
  if (text.size() >= 2 && text[0] == 0 && text[1] != 0)
    return "UTF-16 big-endian text (a NUL byte at byte 0, no byte order mark); JSON must be UTF-8";
  if (text.size() >= 2 && text[0] != 0 && text[1] == 0)
    return "UTF-16 little-endian text (a NUL byte at byte 1, no byte order mark); JSON must be UTF-8";
  if (const std::size_t bad = io::first_invalid_utf8(text); bad != std::string_view::npos)
    return fmt::format("not UTF-8: byte 0x{:02X} at {} (byte {})", static_cast<unsigned char>(text[bad]),
                       position_of(text, bad), bad);
  return std::nullopt;
}

// Where simdjson's "unescaped characters" is: the first control character
// inside a string.
std::optional<std::string> unescaped_control(std::string_view text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!in_string) {
      in_string = c == '"';
      continue;
    }
    if (c == '\\') {
      ++i;
    } else if (c == '"') {
      in_string = false;
    } else if (c < 0x20) {
      return fmt::format("control character U+{:04X} inside a string at {} (write it as \\u{:04x})", c,
                         position_of(text, i), c);
    }
  }
  return std::nullopt;
}

} // namespace

Value parse(std::string_view text, std::string_view source) {
  const auto invalid = [&](std::string_view problem) {
    return InputError(fmt::format("{}: $: invalid JSON: {}", source, problem));
  };
  // Checked first: a newer simdjson might skip a byte order mark, and the
  // answer must not depend on its version.
  if (text.starts_with("\xEF\xBB\xBF")) throw invalid(*encoding_problem(text));
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
    if (const auto problem = encoding_problem(text)) throw invalid(*problem);
    if (error == simdjson::UNESCAPED_CHARS) {
      if (const auto problem = unescaped_control(text)) throw invalid(*problem);
    }
    throw invalid(simdjson::error_message(error));
  }
  return Converter(source).convert(root, "$");
}

Value parse_file(const std::filesystem::path &path, const io::FileKind &kind) {
  return parse(io::read_file(path, kind), path.string());
}

} // namespace kibench::json
