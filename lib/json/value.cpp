#include "lib/json/value.hpp"

#include <algorithm>
#include <cmath>

namespace kibench::json {

Object::Object(std::initializer_list<Member> members) {
  for (const auto &m : members) set(m.first, m.second);
}

Object &Object::set(std::string key, Value value) {
  if (Value *existing = find(key)) {
    *existing = std::move(value);
  } else {
    members_.emplace_back(std::move(key), std::move(value));
  }
  return *this;
}

const Value *Object::find(std::string_view key) const {
  auto it = std::find_if(members_.begin(), members_.end(), [&](const Member &m) { return m.first == key; });
  return it == members_.end() ? nullptr : &it->second;
}

Value *Object::find(std::string_view key) {
  auto it = std::find_if(members_.begin(), members_.end(), [&](const Member &m) { return m.first == key; });
  return it == members_.end() ? nullptr : &it->second;
}

bool Object::erase(std::string_view key) {
  auto it = std::find_if(members_.begin(), members_.end(), [&](const Member &m) { return m.first == key; });
  if (it == members_.end()) return false;
  members_.erase(it);
  return true;
}

// Objects are equal as JSON objects: same members, any order.
bool operator==(const Object &a, const Object &b) {
  if (a.size() != b.size()) return false;
  for (const auto &[key, value] : a) {
    const Value *other = b.find(key);
    if (other == nullptr || !(*other == value)) return false;
  }
  return true;
}

bool Value::is_integer() const {
  if (!is_number()) return false;
  const double x = as_number();
  return std::isfinite(x) && std::floor(x) == x && std::fabs(x) <= 9007199254740992.0;
}

const Value *Value::find(std::string_view key) const {
  return is_object() ? as_object().find(key) : nullptr;
}

std::string_view Value::type_name() const {
  switch (storage_.index()) {
  case 0:
    return "null";
  case 1:
    return "boolean";
  case 2:
    return "number";
  case 3:
    return "string";
  case 4:
    return "array";
  default:
    return "object";
  }
}

} // namespace kibench::json
