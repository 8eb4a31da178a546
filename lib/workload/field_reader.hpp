// Strict, path-aware reading of a parsed JSON document. Every problem is an
// InputError "<source>: <json path>: <problem>" on one line, so a bad file
// is reported with the exact member to fix. Object members are checked
// against an allowed list before anything is read, so a misspelt key is
// reported as unknown rather than as a missing required one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::detail {

// One value in a document, with the JSON path that leads to it.
class Field {
public:
  Field(const json::Value &value, std::string path, const std::string &source)
      : value_(&value), path_(std::move(path)), source_(&source) {}

  [[nodiscard]] const json::Value &value() const { return *value_; }
  [[nodiscard]] const std::string &path() const { return path_; }
  [[nodiscard]] const std::string &source() const { return *source_; }

  [[noreturn]] void fail(std::string_view problem) const;

  // Typed access; each fails with "expected <type>, got <type>".
  [[nodiscard]] const json::Array &array() const;
  [[nodiscard]] const std::string &string() const;
  [[nodiscard]] bool boolean() const;
  // A finite number.
  [[nodiscard]] double number() const;
  // An integer (no fractional part, |x| <= 2^53) within [min, max].
  [[nodiscard]] std::int64_t integer(std::int64_t min, std::int64_t max) const;
  // A string of at most max_chars Unicode code points.
  [[nodiscard]] const std::string &bounded_string(std::size_t max_chars) const;

  [[nodiscard]] Field element(std::size_t index) const;

private:
  friend class ObjectReader;
  [[nodiscard]] Field member(std::string_view key, const json::Value &child) const;

  const json::Value *value_;
  std::string path_;
  const std::string *source_;
};

// The members of one JSON object. Construction rejects any member not in
// `allowed` ("unknown <noun> "x" (allowed: a, b)"); required() rejects a
// missing one ("missing required <noun> "x"").
class ObjectReader {
public:
  ObjectReader(const Field &field, std::span<const std::string_view> allowed,
               std::string_view noun = "field");
  ObjectReader(const Field &field, std::initializer_list<std::string_view> allowed,
               std::string_view noun = "field")
      : ObjectReader(field, std::span<const std::string_view>(allowed.begin(), allowed.size()), noun) {}

  [[nodiscard]] Field required(std::string_view key) const;
  [[nodiscard]] std::optional<Field> optional(std::string_view key) const;
  [[nodiscard]] const Field &field() const { return field_; }
  [[nodiscard]] const json::Object &object() const { return field_.value().as_object(); }

private:
  Field field_;
  std::string noun_;
};

// True when `text` matches ^[a-z][a-z0-9_]*$ (KernelIndex's identifier
// pattern for axis, tensor, scalar, dtype and generator names).
bool is_identifier(std::string_view text);

// The JSON path of a member: "$.a.b" for plain keys, "$.a[\"odd key\"]"
// otherwise (the same form json::parse uses).
std::string member_path(const std::string &parent, std::string_view key);

} // namespace kibench::detail
