#include "lib/digest/digest.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/core.h>
#include <sodium.h>

#include "lib/error.hpp"
#include "lib/json/canonical.hpp"

namespace kibench {
namespace {

// libsodium must be initialized once before use; sodium_init() is itself
// safe to call again, and a function-local static runs it exactly once.
void ensure_sodium() {
  static const int status = sodium_init();
  if (status < 0) throw std::runtime_error("libsodium failed to initialize");
}

} // namespace

std::string sha256_digest(std::string_view bytes) {
  ensure_sodium();
  std::array<unsigned char, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256(hash.data(), reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size());
  std::string out = "sha256:";
  out.reserve(out.size() + 2 * hash.size());
  static constexpr std::string_view hex = "0123456789abcdef";
  for (const unsigned char byte : hash) {
    out.push_back(hex[byte >> 4]);
    out.push_back(hex[byte & 0x0F]);
  }
  return out;
}

bool is_sha256_digest(std::string_view text) {
  constexpr std::string_view prefix = "sha256:";
  if (text.size() != prefix.size() + 64 || !text.starts_with(prefix)) return false;
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(prefix.size()), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string canonical_digest(const json::Value &value) {
  return sha256_digest(json::canonical(value));
}

std::string manifest_digest(const json::Value &manifest) {
  if (!manifest.is_object()) {
    throw InputError(fmt::format("a manifest must be a JSON object, not {}", manifest.type_name()));
  }
  json::Object identity;
  for (const char *key : {"apiVersion", "kind", "spec"}) {
    const json::Value *member = manifest.find(key);
    if (member == nullptr) throw InputError(fmt::format("manifest has no \"{}\"", key));
    identity.set(key, *member);
  }
  return canonical_digest(json::Value(std::move(identity)));
}

std::string comparison_key(const ComparisonKeyParts &parts) {
  const json::Value correctness = json::Object{{"correctness", parts.correctness}};
  const json::Value key = json::Object{
      {"v", 1},
      {"operation", parts.operation},
      {"workload", parts.workload},
      {"protocol", parts.protocol},
      {"environment", parts.environment},
      {"correctness", canonical_digest(correctness)},
      {"metric", parts.metric},
  };
  return canonical_digest(key);
}

} // namespace kibench
