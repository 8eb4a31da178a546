#include "lib/compare/field_difference.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/io/terminal_text.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::compare {
namespace {

// Long prose (an outlier policy, a description) is cut: the field's name
// already says where to look.
constexpr std::size_t kShownCharacters = 80;

std::string cut(std::string text) {
  if (text.size() <= kShownCharacters) return text;
  std::size_t end = kShownCharacters;
  // Not inside a UTF-8 sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "…";
}

std::string path_of(const std::string &prefix, const std::string &key) {
  return prefix.empty() ? key : prefix + "." + key;
}

bool skipped(const std::vector<std::string> &skip, const std::string &path) {
  return std::find(skip.begin(), skip.end(), path) != skip.end();
}

void collect(const json::Value *a, const json::Value *b, const std::vector<std::string> &skip,
             const std::string &path, std::vector<FieldDifference> &out) {
  if (skipped(skip, path)) return;
  if (a != nullptr && b != nullptr && a->is_object() && b->is_object()) {
    for (const auto &[key, value] : a->as_object())
      collect(&value, b->find(key), skip, path_of(path, key), out);
    for (const auto &[key, value] : b->as_object()) {
      if (a->find(key) == nullptr) collect(nullptr, &value, skip, path_of(path, key), out);
    }
    return;
  }
  if (a != nullptr && b != nullptr && *a == *b) return;
  out.push_back({path, a != nullptr ? shown_value(*a) : std::string(kAbsent),
                 b != nullptr ? shown_value(*b) : std::string(kAbsent)});
}

} // namespace

std::string to_string(const FieldDifference &difference) {
  return fmt::format("{} {} ≠ {}", difference.field, difference.first, difference.second);
}

std::string join(const std::vector<FieldDifference> &differences) {
  std::vector<std::string> parts;
  parts.reserve(differences.size());
  for (const auto &difference : differences) parts.push_back(to_string(difference));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string shown_value(const json::Value &value) {
  if (value.is_string()) return cut(io::printable(value.as_string()));
  if (value.is_number()) return json::format_number(value.as_number());
  return cut(io::printable(json::canonical(value)));
}

std::vector<FieldDifference> leaf_differences(const json::Value &a, const json::Value &b,
                                              const std::vector<std::string> &skip,
                                              const std::string &prefix) {
  std::vector<FieldDifference> out;
  collect(&a, &b, skip, prefix, out);
  return out;
}

} // namespace kibench::compare
