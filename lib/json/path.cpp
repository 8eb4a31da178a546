#include "lib/json/path.hpp"

namespace kibench::json {

const Value *member_at(const Value &value, std::string_view dotted_path) {
  const Value *current = &value;
  while (current != nullptr && !dotted_path.empty()) {
    const std::size_t dot = dotted_path.find('.');
    current = current->find(dotted_path.substr(0, dot));
    dotted_path = dot == std::string_view::npos ? std::string_view{} : dotted_path.substr(dot + 1);
  }
  return current;
}

const std::string *find_string_at(const Value &value, std::string_view dotted_path) {
  const Value *member = member_at(value, dotted_path);
  return member != nullptr && member->is_string() ? &member->as_string() : nullptr;
}

std::string string_at(const Value &value, std::string_view dotted_path) {
  const std::string *found = find_string_at(value, dotted_path);
  return found != nullptr ? *found : std::string{};
}

} // namespace kibench::json
