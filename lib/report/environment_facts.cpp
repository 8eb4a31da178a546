#include "lib/report/environment_facts.hpp"

#include <fmt/format.h>

#include "lib/json/canonical.hpp"
#include "lib/report/manifest_index.hpp"
#include "lib/report/units.hpp"

namespace kibench::report {
namespace {

using Facts = std::vector<std::pair<std::string, std::string>>;

std::string scalar_text(const std::string &key, const json::Value &value) {
  if (value.is_string()) return value.as_string();
  if (value.is_bool()) return value.as_bool() ? "yes" : "no";
  if (value.is_null()) return "null";
  const std::string number = json::format_number(value.as_number());
  // memoryBytes and the like: the exact count, and what it means.
  if (key.ends_with("Bytes") || key.ends_with("bytes"))
    return fmt::format("{} ({})", format_bytes(value.as_number()), number);
  return number;
}

void flatten(const std::string &path, const json::Value &value, Facts &out) {
  if (value.is_object()) {
    for (const auto &[key, member] : value.as_object())
      flatten(path.empty() ? key : path + "." + key, member, out);
    return;
  }
  if (value.is_array()) {
    // A list of scalars reads best on one line; a list of objects by index.
    bool scalars = true;
    for (const json::Value &item : value.as_array())
      scalars = scalars && !item.is_object() && !item.is_array();
    if (scalars) {
      std::vector<std::string> items;
      for (const json::Value &item : value.as_array()) items.push_back(scalar_text(path, item));
      out.emplace_back(path, fmt::format("{}", fmt::join(items, ", ")));
      return;
    }
    for (std::size_t i = 0; i < value.as_array().size(); ++i)
      flatten(fmt::format("{}[{}]", path, i), value.as_array()[i], out);
    return;
  }
  out.emplace_back(path, scalar_text(path, value));
}

} // namespace

EnvironmentSection describe_environment(const std::string &digest, const std::string &name,
                                        const json::Value *manifest) {
  EnvironmentSection out;
  out.digest = digest;
  out.name = name;
  if (manifest == nullptr) return out;
  out.title = string_at(*manifest, "metadata.title");
  if (const json::Value *spec = manifest->find("spec")) flatten("", *spec, out.facts);
  if (const json::Value *labels = member_at(*manifest, "metadata.labels"))
    flatten("labels", *labels, out.facts);
  return out;
}

} // namespace kibench::report
