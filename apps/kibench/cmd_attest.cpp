// `kibench attest`: sign a run directory (DSSE envelope over an in-toto
// Statement naming every file of the run with its SHA-256).
#include <memory>
#include <string>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/attest/attest_run.hpp"
#include "lib/attest/key_files.hpp"

namespace kibench::cli {
namespace {

struct AttestOptions {
  std::string run_dir;
  std::string key_file;
  bool force = false;
};

int attest_run_directory(const AttestOptions &options) {
  const attest::SecretKey key = attest::read_secret_key(options.key_file);
  const attest::WrittenAttestation written = attest::attest_run(options.run_dir, key, options.force);
  fmt::print("attested  {}\n", options.run_dir);
  fmt::print("subjects  {}\n", written.statement.subjects.size());
  fmt::print("keyid  {}\n", key.public_key().keyid());
  fmt::print("wrote {}\n", written.file.string());
  return 0;
}

} // namespace

void add_attest(CLI::App &app, Action &action) {
  CLI::App *command = app.add_subcommand(
      "attest", "Sign a run directory: write RUN_DIR/attestation.dsse.json with an Ed25519 key.");
  auto options = std::make_shared<AttestOptions>();
  command->add_option("RUN_DIR", options->run_dir, "A run directory written by `kibench run`")->required();
  command->add_option("--key", options->key_file, "Secret key file from `kibench keygen` (mode 0600)")
      ->required()
      ->type_name("KEY");
  command->add_flag("--force", options->force, "Replace an existing attestation");
  command->footer(R"(The attestation is a DSSE envelope (payloadType application/vnd.in-toto+json) over an
in-toto v1 Statement: one subject per *.json file of the run (manifests, raw samples,
summary.json) with its sha256, and a predicate (https://kibench.dev/attestation/run/v1)
with the kibench version, the creation time and each BenchmarkRun's identity digest.
A secret key file that group or others may access is refused. See docs/attest.md.

Examples:
  kibench keygen --out signing
  kibench attest runs/<run>/ --key signing.key
  kibench verify runs/<run>/ --pub signing.pub

Exit codes: 0 written, 2 bad input (key file, run directory, existing attestation).)");
  command->callback([options, &action] { action = [options] { return attest_run_directory(*options); }; });
}

} // namespace kibench::cli
