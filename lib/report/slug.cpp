#include "lib/report/slug.hpp"

#include <fmt/core.h>

namespace kibench::report {

std::string slug(std::string_view name) {
  std::string out;
  bool pending_dash = false;
  for (const char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    const bool upper = c >= 'A' && c <= 'Z';
    if (keep || upper) {
      if (pending_dash && !out.empty()) out += '-';
      pending_dash = false;
      out += upper ? static_cast<char>(c - 'A' + 'a') : c;
    } else {
      pending_dash = true;
    }
  }
  return out.empty() ? "x" : out;
}

std::string SlugRegistry::unique(std::string_view name) {
  std::string base = slug(name);
  const int seen = ++uses_[base];
  if (seen == 1) return base;
  // A suffixed slug could itself collide with a later name ("a-2"); keep
  // counting until it is free.
  for (int n = seen;; ++n) {
    std::string candidate = fmt::format("{}-{}", base, n);
    if (uses_.emplace(candidate, 1).second) return candidate;
  }
}

} // namespace kibench::report
