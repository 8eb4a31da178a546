// A JSON value as KernelIndex sees it: numbers are IEEE doubles (RFC 8785
// serializes nothing else), objects keep insertion order for readable output
// and are sorted only when canonicalized.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kibench::json {

class Value;
using Array = std::vector<Value>;

class Object {
public:
  using Member = std::pair<std::string, Value>;

  Object() = default;
  Object(std::initializer_list<Member> members);

  // Replaces an existing member of the same key, else appends.
  Object &set(std::string key, Value value);
  [[nodiscard]] const Value *find(std::string_view key) const;
  [[nodiscard]] Value *find(std::string_view key);
  [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
  bool erase(std::string_view key);

  [[nodiscard]] auto begin() const { return members_.begin(); }
  [[nodiscard]] auto end() const { return members_.end(); }
  // Defined below Value: clang with libstdc++ needs Value complete here.
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] bool empty() const;

  friend bool operator==(const Object &, const Object &);

private:
  std::vector<Member> members_;
};

class Value {
public:
  using Storage = std::variant<std::nullptr_t, bool, double, std::string, Array, Object>;

  Value() : storage_(nullptr) {}
  Value(std::nullptr_t) : storage_(nullptr) {}
  Value(bool b) : storage_(b) {}
  Value(double d) : storage_(d) {}
  Value(int i) : storage_(static_cast<double>(i)) {}
  Value(std::int64_t i) : storage_(static_cast<double>(i)) {}
  Value(std::uint64_t i) : storage_(static_cast<double>(i)) {}
  Value(const char *s) : storage_(std::string(s)) {}
  Value(std::string s) : storage_(std::move(s)) {}
  Value(std::string_view s) : storage_(std::string(s)) {}
  Value(Array a) : storage_(std::move(a)) {}
  Value(Object o) : storage_(std::move(o)) {}

  [[nodiscard]] bool is_null() const { return std::holds_alternative<std::nullptr_t>(storage_); }
  [[nodiscard]] bool is_bool() const { return std::holds_alternative<bool>(storage_); }
  [[nodiscard]] bool is_number() const { return std::holds_alternative<double>(storage_); }
  [[nodiscard]] bool is_string() const { return std::holds_alternative<std::string>(storage_); }
  [[nodiscard]] bool is_array() const { return std::holds_alternative<Array>(storage_); }
  [[nodiscard]] bool is_object() const { return std::holds_alternative<Object>(storage_); }
  // A number with no fractional part that a double holds exactly (|x| <= 2^53).
  [[nodiscard]] bool is_integer() const;

  [[nodiscard]] bool as_bool() const { return std::get<bool>(storage_); }
  [[nodiscard]] double as_number() const { return std::get<double>(storage_); }
  [[nodiscard]] std::int64_t as_int() const { return static_cast<std::int64_t>(as_number()); }
  [[nodiscard]] const std::string &as_string() const { return std::get<std::string>(storage_); }
  [[nodiscard]] const Array &as_array() const { return std::get<Array>(storage_); }
  [[nodiscard]] Array &as_array() { return std::get<Array>(storage_); }
  [[nodiscard]] const Object &as_object() const { return std::get<Object>(storage_); }
  [[nodiscard]] Object &as_object() { return std::get<Object>(storage_); }

  // Member lookup on an object; nullptr when absent or not an object.
  [[nodiscard]] const Value *find(std::string_view key) const;
  [[nodiscard]] const Storage &storage() const { return storage_; }
  [[nodiscard]] std::string_view type_name() const;

  friend bool operator==(const Value &a, const Value &b) { return a.storage_ == b.storage_; }

private:
  Storage storage_;
};

inline std::size_t Object::size() const {
  return members_.size();
}
inline bool Object::empty() const {
  return members_.empty();
}

} // namespace kibench::json
