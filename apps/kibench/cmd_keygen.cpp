// `kibench keygen`: a new Ed25519 key pair for signing run attestations.
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/attest/ed25519.hpp"
#include "lib/attest/key_files.hpp"

namespace kibench::cli {
namespace {

struct KeygenOptions {
  std::string prefix;
  bool force = false;
};

int generate_key_pair(const KeygenOptions &options) {
  const attest::KeyPairPaths paths = attest::key_pair_paths(options.prefix);
  const attest::SecretKey key = attest::SecretKey::generate();
  attest::write_key_pair(key, paths, options.force);
  fmt::print("wrote {}  (secret, mode 0600)\n", paths.secret_key.string());
  fmt::print("wrote {}\n", paths.public_key.string());
  fmt::print("keyid {}\n", key.public_key().keyid());
  return 0;
}

} // namespace

void add_keygen(CLI::App &app, Action &action) {
  CLI::App *command =
      app.add_subcommand("keygen", "Create an Ed25519 key pair for signing run attestations.");
  auto options = std::make_shared<KeygenOptions>();
  command->add_option("--out", options->prefix, "Write PREFIX.key (secret) and PREFIX.pub (public)")
      ->required()
      ->type_name("PREFIX");
  command->add_flag("--force", options->force, "Replace an existing PREFIX.key and PREFIX.pub");
  command->footer(R"(PREFIX.key is created with mode 0600 and never overwritten without --force; keep it
private. PREFIX.pub is what others need to check attestations. The keyid is the hex SHA-256
of the 32 public-key bytes. Both files are standard PEM (PKCS#8 and SubjectPublicKeyInfo),
as openssl writes and reads them; docs/attest.md.

Examples:
  kibench keygen --out ~/.kibench/signing
  kibench attest runs/<run>/ --key ~/.kibench/signing.key

Exit codes: 0 written, 2 a file exists or cannot be written.)");
  command->callback([options, &action] { action = [options] { return generate_key_pair(*options); }; });
}

} // namespace kibench::cli
