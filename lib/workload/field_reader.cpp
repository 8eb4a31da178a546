#include "lib/workload/field_reader.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/io/text_rules.hpp"

namespace kibench::detail {
namespace {

// A member name that can follow a dot in a path; json::parse uses the same
// rule, so paths in its errors and in ours read alike.
bool is_plain_key(std::string_view key) {
  if (key.empty()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(letter || (digit && i > 0) || c == '-')) return false;
  }
  return true;
}

// Code points of a UTF-8 string (json::parse has already checked the
// encoding): every byte that is not a continuation byte 10xxxxxx.
std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u; }));
}

} // namespace

bool is_identifier(std::string_view text) {
  if (text.empty() || !(text.front() >= 'a' && text.front() <= 'z')) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

std::string member_path(const std::string &parent, std::string_view key) {
  // A key of 50 000 characters is named by its start and its length: the
  // message about it stays readable.
  constexpr std::size_t kShownKeyBytes = 80;
  if (key.size() > kShownKeyBytes)
    return fmt::format("{}[{:?}…({} bytes)]", parent, io::cut_utf8(key, kShownKeyBytes), key.size());
  if (is_plain_key(key)) return fmt::format("{}.{}", parent, key);
  // {:?} escapes quotes, backslashes and control characters, so the path
  // (and the one-line message around it) stays on one line.
  return fmt::format("{}[{:?}]", parent, key);
}

void Field::fail(std::string_view problem) const {
  throw InputError(fmt::format("{}: {}: {}", source(), path_, problem));
}

const json::Array &Field::array() const {
  if (!value_->is_array()) fail(fmt::format("expected an array, got {}", value_->type_name()));
  return value_->as_array();
}

const std::string &Field::string() const {
  if (!value_->is_string()) fail(fmt::format("expected a string, got {}", value_->type_name()));
  return value_->as_string();
}

const std::string &Field::bounded_string(std::size_t max_chars) const {
  const std::string &text = string();
  if (code_points(text) > max_chars) fail(fmt::format("longer than {} characters", max_chars));
  return text;
}

bool Field::boolean() const {
  if (!value_->is_bool()) fail(fmt::format("expected a boolean, got {}", value_->type_name()));
  return value_->as_bool();
}

double Field::number() const {
  if (!value_->is_number()) fail(fmt::format("expected a number, got {}", value_->type_name()));
  const double x = value_->as_number();
  // json::parse never yields these; a document built in code might.
  if (!std::isfinite(x)) fail("expected a finite number");
  return x;
}

std::int64_t Field::integer(std::int64_t min, std::int64_t max) const {
  const double x = number();
  if (!value_->is_integer()) {
    fail(fmt::format("expected an integer in [{}, {}], got {}", min, max, x));
  }
  // |x| <= 2^53 here, so the conversion is exact.
  const auto n = static_cast<std::int64_t>(x);
  if (n < min || n > max) fail(fmt::format("expected an integer in [{}, {}], got {}", min, max, n));
  return n;
}

Field Field::element(std::size_t index) const {
  return Field(array().at(index), fmt::format("{}[{}]", path_, index), *source_);
}

Field Field::member(std::string_view key, const json::Value &child) const {
  return Field(child, member_path(path_, key), *source_);
}

ObjectReader::ObjectReader(const Field &field, std::span<const std::string_view> allowed,
                           std::string_view noun)
    : field_(field), noun_(noun) {
  if (!field.value().is_object())
    field.fail(fmt::format("expected an object, got {}", field.value().type_name()));
  for (const auto &[key, value] : object()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      field.fail(fmt::format("unknown {} {:?} (allowed: {})", noun, key, fmt::join(allowed, ", ")));
    }
  }
}

Field ObjectReader::required(std::string_view key) const {
  const json::Value *child = object().find(key);
  if (child == nullptr) field_.fail(fmt::format("missing required {} \"{}\"", noun_, key));
  return field_.member(key, *child);
}

std::optional<Field> ObjectReader::optional(std::string_view key) const {
  const json::Value *child = object().find(key);
  if (child == nullptr) return std::nullopt;
  return field_.member(key, *child);
}

} // namespace kibench::detail
