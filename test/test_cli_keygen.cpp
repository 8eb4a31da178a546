// keygen --force replaces a key pair only once the new pair is written: a
// pair that cannot be placed leaves the old one as it was, and nothing
// else behind.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "lib/attest/key_files.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

std::vector<std::string> names_in(const fs::path &folder) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The keyid of the key a secret key file holds.
std::string secret_keyid(const fs::path &key) {
  return kibench::attest::read_secret_key(key).public_key().keyid();
}

} // namespace

TEST_CASE("keygen --force keeps the old pair when the new one cannot be placed", "[attest][cli][keygen]") {
  TempDir tmp;
  const fs::path prefix = tmp.path() / "signing";
  REQUIRE(run_kibench("keygen --out " + quoted(prefix)).exit_code == 0);
  const fs::path key = tmp.path() / "signing.key";
  const fs::path pub = tmp.path() / "signing.pub";
  const std::string old_key = read_text(key);

  // Something that is not a key file where the public key goes: the new
  // pair cannot be placed. The old secret key used to be deleted first.
  fs::remove(pub);
  fs::create_directories(pub);
  std::ofstream(pub / "keep.txt") << "not a key\n";
  const auto forced = run_kibench("keygen --force --out " + quoted(prefix));
  INFO(forced.err);
  CHECK(forced.exit_code == 2);
  CHECK_THAT(forced.err, Contains(pub.string()));
  CHECK(read_text(key) == old_key);
  CHECK(fs::status(key).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(fs::exists(pub / "keep.txt"));
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"signing.key", "signing.pub"});
}

TEST_CASE("keygen --force replaces both halves with a matching new pair", "[attest][cli][keygen]") {
  TempDir tmp;
  const fs::path prefix = tmp.path() / "signing";
  REQUIRE(run_kibench("keygen --out " + quoted(prefix)).exit_code == 0);
  const fs::path key = tmp.path() / "signing.key";
  const fs::path pub = tmp.path() / "signing.pub";
  const std::string old_keyid = secret_keyid(key);

  const auto forced = run_kibench("keygen --force --out " + quoted(prefix));
  INFO(forced.err);
  REQUIRE(forced.exit_code == 0);
  const std::string new_keyid = secret_keyid(key);
  CHECK(new_keyid != old_keyid);
  CHECK(kibench::attest::read_public_key(pub).keyid() == new_keyid);
  CHECK_THAT(forced.out, Contains("keyid " + new_keyid + "\n"));
  CHECK(fs::status(key).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"signing.key", "signing.pub"});

  // Without --force an existing half stops the pair, and nothing is written.
  fs::remove(key);
  const auto refused = run_kibench("keygen --out " + quoted(prefix));
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Contains("signing.pub: already exists"));
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"signing.pub"});
}
