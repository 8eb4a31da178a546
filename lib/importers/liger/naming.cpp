#include "lib/importers/liger/naming.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kibench::importers::liger {
namespace {

// Rank of a character in case-key order; anything else sorts after letters
// by its byte value (axis names are [a-z][a-z0-9_]*, so this never decides).
int case_key_rank(char c) {
  if (c == '_') return 0;
  if (c >= '0' && c <= '9') return 1 + (c - '0');
  if (c >= 'a' && c <= 'z') return 11 + (c - 'a');
  if (c >= 'A' && c <= 'Z') return 37 + (c - 'A');
  return 63 + static_cast<unsigned char>(c);
}

} // namespace

bool case_key_less(std::string_view a, std::string_view b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](char x, char y) { return case_key_rank(x) < case_key_rank(y); });
}

std::string case_key(std::vector<std::pair<std::string, std::int64_t>> axes, std::string_view dtype) {
  std::sort(axes.begin(), axes.end(),
            [](const auto &x, const auto &y) { return case_key_less(x.first, y.first); });
  std::string key;
  for (const auto &[name, value] : axes) key += fmt::format("{}{}-", name, value);
  key += dtype;
  return key;
}

std::string import_kebab(std::string_view text) {
  std::string out;
  bool pending_dash = false;
  for (const char raw : text) {
    const char c = (raw >= 'A' && raw <= 'Z') ? static_cast<char>(raw - 'A' + 'a') : raw;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (pending_dash) out.push_back('-');
      pending_dash = false;
      out.push_back(c);
    } else {
      // Leading separators vanish; trailing ones are never emitted.
      pending_dash = !out.empty();
    }
  }
  if (out.size() > 100) out.resize(100);
  return out;
}

std::string run_name(const RunIdentity &identity) {
  return import_kebab(fmt::format("liger-{}-{}-{}-{}-{}-{}", identity.kernel, identity.mode,
                                  identity.provider, identity.gpu_name, identity.case_key,
                                  identity.timestamp));
}

std::string external_id(const RunIdentity &identity) {
  std::string timestamp = identity.timestamp;
  std::replace(timestamp.begin(), timestamp.end(), ':', '-');
  std::replace(timestamp.begin(), timestamp.end(), ' ', '-');
  return fmt::format("{}/{}/{}/{}/{}/{}", identity.kernel, identity.mode, identity.provider,
                     import_kebab(identity.gpu_name), identity.case_key, timestamp);
}

} // namespace kibench::importers::liger
