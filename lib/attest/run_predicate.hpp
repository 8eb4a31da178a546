// The predicate of a kibench run attestation: who made it and when, and the
// identity digest of each BenchmarkRun it covers, so a reader can see which
// runs were signed without opening the subjects.
//   {"kibench": {"version": "0.1.0"}, "createdAt": "2026-01-02T03:04:05.678Z",
//    "runs": [{"file": "run.fused.json", "name": "<metadata.name>", "digest": "sha256:<hex>"}]}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::attest {

inline constexpr std::string_view run_predicate_type = "https://kibench.dev/attestation/run/v1";

struct AttestedRun {
  std::string file;   // run.<impl>.json
  std::string name;   // its metadata.name; empty when absent
  std::string digest; // its manifest identity digest (JCS of apiVersion, kind, spec)
};

struct RunPredicate {
  std::string kibench_version;
  std::string created_at; // RFC 3339 UTC
  std::vector<AttestedRun> runs;
};

json::Value run_predicate_json(const RunPredicate &predicate);

// InputError "<source>: <json path>: <problem>" when a member is missing or
// of the wrong type.
RunPredicate parse_run_predicate(const json::Value &predicate, std::string_view source);

} // namespace kibench::attest
