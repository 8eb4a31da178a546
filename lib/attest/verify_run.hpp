// Checking a run directory against its attestation.dsse.json: the signature
// first (nothing in an unverified payload is believed), then every subject's
// SHA-256, then that no *.json file was added beside the subjects.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/attest/ed25519.hpp"
#include "lib/attest/run_predicate.hpp"

namespace kibench::attest {

struct RunVerification {
  std::size_t subject_count = 0;
  // Set once the signature verified.
  std::optional<RunPredicate> predicate;
  // One line each, e.g. "signature does not verify with ci.pub",
  // "keyid 3f.. does not match ci.pub (keyid 9a..)",
  // "subject run.fused.json: sha256 mismatch (expected 12.., found 34..)",
  // "subject samples.fused.json: missing", "file extra.json is not a subject".
  std::vector<std::string> failures;

  [[nodiscard]] bool ok() const { return failures.empty(); }
};

// InputError when the envelope or its statement is unreadable or malformed,
// or is not a kibench run attestation; everything that can be checked and
// fails is in failures.
RunVerification verify_run(const std::filesystem::path &run_dir, const PublicKey &key,
                           const std::filesystem::path &key_file);

} // namespace kibench::attest
