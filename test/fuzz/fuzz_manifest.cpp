// libFuzzer target: arbitrary bytes through json::parse, the RFC 8785
// writer and manifest_digest, the path `kibench digest` takes. Built and run
// by run_fuzz.sh (clang, ASan + UBSan).
//
// Allowed: an InputError (bad input). A bug: any crash, sanitizer report or
// other exception, or canonical JSON that does not read back as the same
// document and the same bytes (JCS is a fixed point).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  kibench::json::Value document;
  try {
    document = kibench::json::parse(text, "fuzz.json");
  } catch (const kibench::InputError &) {
    return 0;
  }

  const std::string canonical = kibench::json::canonical(document);
  const kibench::json::Value reread = kibench::json::parse(canonical, "canonical");
  require(reread == document);
  require(kibench::json::canonical(reread) == canonical);
  (void)kibench::json::pretty(document);

  try {
    const std::string digest = kibench::manifest_digest(document);
    require(digest.size() == 7 + 64 && digest.starts_with("sha256:"));
  } catch (const kibench::InputError &) {
    // Not a manifest (no apiVersion, kind or spec): rejected, not hashed.
  }
  return 0;
}
