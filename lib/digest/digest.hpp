// Digests as KernelIndex computes them (../kernelindex/README.md).
#pragma once

#include <string>
#include <string_view>

#include "lib/json/value.hpp"

namespace kibench {

// "sha256:" + lowercase hex of SHA-256(bytes).
std::string sha256_digest(std::string_view bytes);

// True for "sha256:" followed by exactly 64 lowercase hex digits, the only
// digest form KernelIndex's schemas accept.
bool is_sha256_digest(std::string_view text);

// Digest of JCS(value) itself (no envelope).
std::string canonical_digest(const json::Value &value);

// Identity digest of a manifest: JCS of exactly {apiVersion, kind, spec};
// metadata never changes identity. Throws InputError naming the missing key.
std::string manifest_digest(const json::Value &manifest);

struct ComparisonKeyParts {
  std::string operation;   // OperationSpec digest
  std::string workload;    // WorkloadCase digest
  std::string protocol;    // protocol equivalence key (its digest)
  std::string environment; // environment equivalence key (its digest)
  json::Value correctness; // the WorkloadCase spec.correctness object
  std::string metric = "latency:median:ns";
};

// digest of JCS {v: 1, operation, workload, protocol, environment,
// correctness: digest of JCS {correctness: ...}, metric}.
std::string comparison_key(const ComparisonKeyParts &parts);

} // namespace kibench
