// Signing a run directory: an in-toto Statement whose subjects are the run's
// files (run_subjects.hpp) and whose predicate names its BenchmarkRuns
// (run_predicate.hpp), in a DSSE envelope signed with Ed25519, written to
// <run_dir>/attestation.dsse.json.
#pragma once

#include <filesystem>
#include <string>

#include "lib/attest/ed25519.hpp"
#include "lib/attest/statement.hpp"

namespace kibench::attest {

// The Statement for the directory as it is now. InputError when it is not a
// directory, holds no run.*.json, or a run.*.json is not a manifest.
Statement run_statement(const std::filesystem::path &run_dir, std::string created_at);

struct WrittenAttestation {
  std::filesystem::path file;
  Statement statement;
};

// Signs run_statement(run_dir, now) and writes the envelope atomically (it
// appears whole or not at all). An existing attestation is an InputError
// unless `replace`.
WrittenAttestation attest_run(const std::filesystem::path &run_dir, const SecretKey &key, bool replace);

} // namespace kibench::attest
