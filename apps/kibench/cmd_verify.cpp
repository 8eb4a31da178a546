// `kibench verify`: check a run directory against its attestation: the
// signature, every subject's sha256, and that no file was added.
#include <memory>
#include <string>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/attest/key_files.hpp"
#include "lib/attest/verify_run.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"

namespace kibench::cli {
namespace {

struct VerifyOptions {
  std::string run_dir;
  std::string public_key_file;
};

int verify_run_directory(const VerifyOptions &options) {
  const attest::PublicKey key = attest::read_public_key(options.public_key_file);
  const attest::RunVerification result = attest::verify_run(options.run_dir, key, options.public_key_file);
  for (const auto &failure : result.failures) fmt::print("FAILED  {}\n", io::printable(failure));
  if (result.failures.size() == 1) throw CheckFailed(result.failures.front());
  if (result.failures.size() > 1) {
    throw CheckFailed(
        fmt::format("{} (and {} more failures above)", result.failures.front(), result.failures.size() - 1));
  }
  fmt::print("verified  {}\n", io::printable(options.run_dir));
  fmt::print("subjects  {}\n", result.subject_count);
  fmt::print("keyid  {}\n", key.keyid());
  fmt::print("created  {} by kibench {}\n", io::printable(result.predicate->created_at),
             io::printable(result.predicate->kibench_version));
  for (const auto &run : result.predicate->runs)
    fmt::print("run  {}  {}\n", io::printable(run.digest), io::printable(run.file));
  return 0;
}

} // namespace

void add_verify(CLI::App &app, Action &action) {
  CLI::App *command = app.add_subcommand(
      "verify", "Check a run directory against its attestation: signature, file digests, no added files.");
  auto options = std::make_shared<VerifyOptions>();
  command->add_option("RUN_DIR", options->run_dir, "A run directory holding attestation.dsse.json")
      ->required();
  command->add_option("--pub", options->public_key_file, "Public key file from `kibench keygen`")
      ->required()
      ->type_name("KEY");
  command->footer(R"(Checks, in order: a signature in RUN_DIR/attestation.dsse.json whose keyid names the
key verifies with it over DSSE's PAE(payloadType, payload); then every subject file's
sha256; then that every *.json file in RUN_DIR is a subject. It does not recompute the
digests the manifests reference (that is `kibench digest --verify`).

Examples:
  kibench verify runs/<run>/ --pub signing.pub
  kibench verify runs/<run>/ --pub signing.pub && kibench digest --verify runs/<run>/

Exit codes: 0 verified, 1 a check failed (the reason is printed),
2 unreadable or malformed attestation or key file.)");
  command->callback([options, &action] { action = [options] { return verify_run_directory(*options); }; });
}

} // namespace kibench::cli
