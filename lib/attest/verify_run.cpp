#include "lib/attest/verify_run.hpp"

#include <optional>
#include <set>
#include <system_error>

#include <fmt/core.h>

#include "lib/attest/dsse_envelope.hpp"
#include "lib/attest/run_subjects.hpp"
#include "lib/attest/statement.hpp"
#include "lib/error.hpp"

namespace kibench::attest {
namespace fs = std::filesystem;

namespace {

std::string signature_keyids(const Envelope &envelope) {
  std::string keyids;
  for (const auto &signature : envelope.signatures) {
    if (!keyids.empty()) keyids += ", ";
    keyids += signature.keyid;
  }
  return keyids;
}

// The signature failure, or nothing when a signature verifies.
std::optional<std::string> signature_failure(const Envelope &envelope, const PublicKey &key,
                                             const fs::path &key_file) {
  switch (check_signature(envelope, key)) {
  case SignatureCheck::verified:
    return std::nullopt;
  case SignatureCheck::no_matching_keyid:
    return fmt::format("keyid {} does not match {} (keyid {})", signature_keyids(envelope), key_file.string(),
                       key.keyid());
  case SignatureCheck::does_not_verify:
    break;
  }
  return fmt::format("signature does not verify with {}", key_file.string());
}

void check_subjects(const fs::path &run_dir, const Statement &statement, RunVerification &result) {
  std::set<std::string> subject_names;
  for (const auto &subject : statement.subjects) {
    subject_names.insert(subject.name);
    const fs::path file = run_dir / subject.name;
    std::error_code error;
    if (!fs::is_regular_file(file, error)) {
      result.failures.push_back(fmt::format("subject {}: missing", subject.name));
      continue;
    }
    const std::string found = sha256_hex(read_file_bytes(file));
    if (found != subject.sha256) {
      result.failures.push_back(fmt::format("subject {}: sha256 mismatch (expected {}, found {})",
                                            subject.name, subject.sha256, found));
    }
  }
  // A file added after signing would be read as part of the run by
  // `kibench digest --verify` and `compare`; it was not vouched for.
  for (const auto &file : subject_files(run_dir)) {
    const std::string name = file.filename().string();
    if (!subject_names.contains(name))
      result.failures.push_back(fmt::format("file {} is not a subject", name));
  }
}

} // namespace

RunVerification verify_run(const fs::path &run_dir, const PublicKey &key, const fs::path &key_file) {
  std::error_code error;
  if (!fs::is_directory(run_dir, error))
    throw InputError(fmt::format("{}: not a directory", run_dir.string()));
  const fs::path envelope_file = run_dir / attestation_file_name;
  const std::string source = envelope_file.string();
  const Envelope envelope = parse_envelope(read_file_bytes(envelope_file), source);

  RunVerification result;
  if (auto failure = signature_failure(envelope, key, key_file)) {
    result.failures.push_back(std::move(*failure));
    return result;
  }
  if (envelope.payload_type != in_toto_payload_type) {
    throw InputError(fmt::format("{}: $.payloadType: \"{}\" is not an in-toto Statement (expected \"{}\")",
                                 source, envelope.payload_type, in_toto_payload_type));
  }
  const std::string payload_source = source + " payload";
  const Statement statement = parse_statement(envelope.payload, payload_source);
  if (statement.predicate_type != run_predicate_type) {
    throw InputError(
        fmt::format("{}: $.predicateType: \"{}\" is not a kibench run attestation (expected \"{}\")",
                    payload_source, statement.predicate_type, run_predicate_type));
  }
  result.predicate = parse_run_predicate(statement.predicate, payload_source);
  result.subject_count = statement.subjects.size();
  check_subjects(run_dir, statement, result);
  return result;
}

} // namespace kibench::attest
