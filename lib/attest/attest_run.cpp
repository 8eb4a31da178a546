#include "lib/attest/attest_run.hpp"

#include <system_error>

#include <fmt/core.h>

#include "lib/attest/dsse_envelope.hpp"
#include "lib/attest/run_predicate.hpp"
#include "lib/attest/run_subjects.hpp"
#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/run_manifest.hpp"

namespace kibench::attest {
namespace fs = std::filesystem;

namespace {

bool is_run_manifest_file(const std::string &name) {
  return name.starts_with("run.") && name.ends_with(".json");
}

AttestedRun attested_run(const std::string &file_name, std::string_view bytes, const fs::path &file) {
  const json::Value manifest = json::parse(bytes, file.string());
  AttestedRun run;
  run.file = file_name;
  try {
    run.digest = manifest_digest(manifest);
  } catch (const InputError &e) {
    throw InputError(fmt::format("{}: {}", file.string(), e.what()));
  }
  if (const json::Value *metadata = manifest.find("metadata")) {
    if (const json::Value *name = metadata->find("name"); name != nullptr && name->is_string()) {
      run.name = name->as_string();
    }
  }
  return run;
}

} // namespace

Statement run_statement(const fs::path &run_dir, std::string created_at) {
  std::error_code error;
  if (!fs::is_directory(run_dir, error))
    throw InputError(fmt::format("{}: not a directory", run_dir.string()));
  Statement statement;
  statement.predicate_type = run_predicate_type;
  RunPredicate predicate;
  predicate.kibench_version = KIBENCH_VERSION;
  predicate.created_at = std::move(created_at);
  for (const auto &file : subject_files(run_dir)) {
    // Read once: the digest and the run's identity come from the same bytes.
    const std::string bytes = read_file_bytes(file);
    const std::string name = file.filename().string();
    statement.subjects.push_back({name, sha256_hex(bytes)});
    if (is_run_manifest_file(name)) predicate.runs.push_back(attested_run(name, bytes, file));
  }
  if (predicate.runs.empty()) {
    throw InputError(
        fmt::format("{}: not a run directory: it holds no run.*.json (see `kibench run`)", run_dir.string()));
  }
  statement.predicate = run_predicate_json(predicate);
  return statement;
}

WrittenAttestation attest_run(const fs::path &run_dir, const SecretKey &key, bool replace) {
  const fs::path file = run_dir / attestation_file_name;
  std::error_code error;
  if (!replace && fs::exists(fs::symlink_status(file, error))) {
    throw InputError(fmt::format("{}: already exists; not replacing it (--force re-attests)", file.string()));
  }
  Statement statement = run_statement(run_dir, utc_timestamp_now());
  // Canonical JSON: the signed bytes are reproducible from the statement.
  const Envelope envelope =
      sign_envelope(std::string(in_toto_payload_type), json::canonical(statement_json(statement)), key);
  io::write_file_atomically(file, json::pretty(envelope_json(envelope)) + "\n");
  return {file, std::move(statement)};
}

} // namespace kibench::attest
