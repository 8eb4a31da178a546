#include "lib/manifest/envelope.hpp"

#include <cmath>
#include <cstdint>

namespace kibench {

json::Value make_manifest(std::string_view kind, json::Object metadata, json::Object spec) {
  return json::Object{{"apiVersion", std::string(kApiVersion)},
                      {"kind", std::string(kind)},
                      {"metadata", std::move(metadata)},
                      {"spec", std::move(spec)}};
}

std::string kebab(std::string_view text) {
  std::string out;
  bool pending_dash = false;
  for (char raw : text) {
    char c = raw;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!keep) {
      pending_dash = !out.empty();
      continue;
    }
    if (pending_dash) out.push_back('-');
    pending_dash = false;
    out.push_back(c);
  }
  if (out.size() > 100) out.resize(100);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// llround is exact (floor(x + 0.5) is not near 2^52); durations are never
// negative, so its half-away-from-zero is half-up.
std::int64_t round_ns(double ns) {
  return static_cast<std::int64_t>(std::llround(ns));
}

} // namespace kibench
