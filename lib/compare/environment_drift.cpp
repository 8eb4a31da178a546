#include "lib/compare/environment_drift.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"

namespace kibench::compare {
namespace {

// What of a version string must match: the text before its first run of
// dot-separated numbers and the first `kept` numbers of that run.
std::string release_line(const std::string &value, std::size_t kept) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const auto first = std::find_if(value.begin(), value.end(), digit);
  if (first == value.end()) return value; // no number: all of it must match
  std::string out(value.begin(), first);
  out += '|';
  auto at = first;
  for (std::size_t n = 0; n < kept && at != value.end() && digit(*at); ++n) {
    if (n > 0) out += '.';
    while (at != value.end() && digit(*at)) out += *at++;
    if (at == value.end() || *at != '.' || at + 1 == value.end() || !digit(*(at + 1))) break;
    ++at; // the dot before the next number
  }
  return out;
}

// cuBLAS reports one integer, major·10000 + minor·100 + patch.
std::string cublaslt_release_line(const std::string &value) {
  const bool integer = value.size() >= 5 && std::all_of(value.begin(), value.end(), [](char c) {
                         return std::isdigit(static_cast<unsigned char>(c)) != 0;
                       });
  if (!integer) return release_line(value, 2);
  const std::uint64_t version = std::stoull(value.substr(0, 18));
  return fmt::format("|{}.{}", version / 10000, version / 100 % 100);
}

// How many leading numbers of the field at `path` must match; nullopt when
// the whole value must.
std::optional<std::size_t> kept_numbers(const std::string &path) {
  if (path == "software.driver") return 1;
  if (path == "software.kernel" || path == "software.cudaToolkit" || path == "software.operatingSystem" ||
      path == "software.compiler" || path == "software.framework.version")
    return 2;
  if (path.starts_with("software.libraries.")) return 2;
  return std::nullopt;
}

// The value reduced to what the rule says must match; nullopt for a field
// that must match exactly.
std::optional<std::string> reduced(const std::string &path, const json::Value &value) {
  const auto kept = kept_numbers(path);
  if (!kept || !value.is_string()) return std::nullopt;
  if (path == "software.libraries.cublaslt") return cublaslt_release_line(value.as_string());
  return release_line(value.as_string(), *kept);
}

const json::Value *at_path(const json::Value &root, const std::string &path) {
  const json::Value *at = &root;
  std::size_t start = 0;
  while (at != nullptr && start <= path.size()) {
    const std::size_t end = path.find('.', start);
    // Library names are [a-z][a-z0-9_]*: a dot only ever separates members.
    at = at->is_object() ? at->find(std::string_view(path).substr(start, end - start)) : nullptr;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return at;
}

const json::Value &spec_of(const json::Value &manifest) {
  static const json::Value empty = json::Object{};
  const json::Value *spec = manifest.find("spec");
  return spec != nullptr ? *spec : empty;
}

// A copy of the spec with every tolerant string field replaced by its
// release line.
json::Value reduce_all(const json::Value &value, const std::string &path) {
  if (value.is_object()) {
    json::Object out;
    for (const auto &[key, member] : value.as_object())
      out.set(key, reduce_all(member, path.empty() ? key : path + "." + key));
    return out;
  }
  if (const auto line = reduced(path, value)) return json::Value(*line);
  return value;
}

} // namespace

std::vector<FieldDifference> environment_differences(const json::Value &a, const json::Value &b) {
  const json::Value &first = spec_of(a);
  const json::Value &second = spec_of(b);
  std::vector<FieldDifference> out = leaf_differences(first, second);
  for (FieldDifference &difference : out) {
    const json::Value *x = at_path(first, difference.field);
    const json::Value *y = at_path(second, difference.field);
    if (x == nullptr || y == nullptr) continue; // recorded by one only: never tolerated
    const auto rx = reduced(difference.field, *x);
    const auto ry = reduced(difference.field, *y);
    difference.within_drift_rule = rx && ry && *rx == *ry;
  }
  return out;
}

bool all_within_drift_rule(const std::vector<FieldDifference> &differences) {
  return !differences.empty() && std::all_of(differences.begin(), differences.end(),
                                             [](const FieldDifference &d) { return d.within_drift_rule; });
}

std::string drift_equivalence_key(const json::Value &environment) {
  return canonical_digest(json::Object{{"rule", std::string(kEnvironmentDriftRule)},
                                       {"spec", reduce_all(spec_of(environment), "")}});
}

} // namespace kibench::compare
