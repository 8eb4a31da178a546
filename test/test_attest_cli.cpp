// End-to-end: `kibench keygen`, `attest` and `verify` on a real run
// directory, and every way of tampering with it that verify must catch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "lib/attest/base64.hpp"
#include "lib/attest/key_files.hpp"
#include "lib/attest/pae.hpp"
#include "lib/digest/digest.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench::test;
using Catch::Matchers::Contains;
using kibench::json::Value;

namespace {

const fs::path kSource = kibench::test::source_dir();
const fs::path kSmall = kSource / "workloads/small/small-v1000-h64-t32.json";

// One run directory, two key pairs and one attestation, made once for the
// whole file (a run takes a while); every test that changes files works on a
// fresh copy.
struct AttestedRun {
  TempDir tmp;
  fs::path run_dir;
  fs::path signer_key, signer_pub, other_pub;

  AttestedRun() {
    const fs::path out = tmp.path() / "runs";
    const auto run = run_kibench("run " + quoted(kSmall) + " --impl cpu-reference --out " + quoted(out) +
                                 " --min-samples 10 --max-samples 20 --min-time 0 --warmup 1");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    for (const auto &entry : fs::directory_iterator(out)) run_dir = entry.path();
    REQUIRE(!run_dir.empty());

    fs::create_directories(tmp.path() / "keys");
    for (const char *name : {"signer", "other"}) {
      const auto keygen = run_kibench("keygen --out " + quoted(tmp.path() / "keys" / name));
      INFO(keygen.err);
      REQUIRE(keygen.exit_code == 0);
    }
    signer_key = tmp.path() / "keys/signer.key";
    signer_pub = tmp.path() / "keys/signer.pub";
    other_pub = tmp.path() / "keys/other.pub";

    const auto attest = run_kibench("attest " + quoted(run_dir) + " --key " + quoted(signer_key));
    INFO(attest.err);
    REQUIRE(attest.exit_code == 0);
  }
};

const AttestedRun &attested_run() {
  static const AttestedRun fixture;
  return fixture;
}

// A copy of the attested run directory to tamper with.
class RunCopy {
public:
  RunCopy() : dir_(tmp_.path() / attested_run().run_dir.filename()) {
    fs::copy(attested_run().run_dir, dir_, fs::copy_options::recursive);
  }
  [[nodiscard]] const fs::path &dir() const { return dir_; }
  [[nodiscard]] fs::path envelope() const { return dir_ / "attestation.dsse.json"; }

private:
  TempDir tmp_;
  fs::path dir_;
};

ProcessResult verify(const fs::path &dir, const fs::path &pub) {
  return run_kibench("verify " + quoted(dir) + " --pub " + quoted(pub));
}

void write_file(const fs::path &path, const std::string &text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> json_file_names(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name != "attestation.dsse.json") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Value statement_of(const fs::path &envelope_file) {
  const Value envelope = kibench::json::parse_file(envelope_file);
  const auto payload = kibench::attest::decode_base64(envelope.find("payload")->as_string());
  REQUIRE(payload);
  return kibench::json::parse(*payload, "payload");
}

// Rewrites one member of the envelope.
void set_envelope_member(const fs::path &envelope_file, const std::string &key, Value value) {
  Value envelope = kibench::json::parse_file(envelope_file);
  envelope.as_object().set(key, std::move(value));
  write_file(envelope_file, kibench::json::pretty(envelope) + "\n");
}

void expect_check_failure(const ProcessResult &result, const std::string &reason) {
  INFO("stdout: " << result.out << "\nstderr: " << result.err);
  CHECK(result.exit_code == 1);
  CHECK_THAT(result.err, Contains(reason));
  CHECK_THAT(result.out, !Contains("verified"));
}

} // namespace

TEST_CASE("keygen writes a 0600 secret key and never overwrites it silently", "[attest][cli]") {
  TempDir tmp;
  const fs::path prefix = tmp.path() / "signing";
  const auto first = run_kibench("keygen --out " + quoted(prefix));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.out, Contains("keyid "));
  const fs::path key = tmp.path() / "signing.key";
  const fs::path pub = tmp.path() / "signing.pub";
  CHECK(fs::status(key).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  // Standard PEM: OpenSSL reads both files as they are.
  CHECK(read_text(pub).starts_with("-----BEGIN PUBLIC KEY-----\n"));
  CHECK(read_text(key).starts_with("-----BEGIN PRIVATE KEY-----\n"));
  const auto openssl_pub = run_command("openssl pkey -pubin -in " + quoted(pub) + " -text -noout");
  INFO(openssl_pub.err);
  CHECK(openssl_pub.exit_code == 0);
  CHECK_THAT(openssl_pub.out, Contains("ED25519 Public-Key"));
  const auto openssl_key = run_command("openssl pkey -in " + quoted(key) + " -pubout");
  CHECK(openssl_key.exit_code == 0);
  CHECK(openssl_key.out == read_text(pub));

  const std::string key_text = read_text(key);
  const std::string pub_text = read_text(pub);
  const auto second = run_kibench("keygen --out " + quoted(prefix));
  CHECK(second.exit_code == 2);
  CHECK_THAT(second.err, Contains("signing.key: already exists"));
  CHECK(read_text(key) == key_text);
  CHECK(read_text(pub) == pub_text);

  const auto forced = run_kibench("keygen --force --out " + quoted(prefix));
  CHECK(forced.exit_code == 0);
  CHECK(read_text(key) != key_text);
  CHECK(read_text(pub) != pub_text);
  CHECK(fs::status(key).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("An attested run verifies, and `kibench digest --verify` still passes on it", "[attest][cli]") {
  const AttestedRun &run = attested_run();
  const auto result = verify(run.run_dir, run.signer_pub);
  INFO("stdout: " << result.out << "\nstderr: " << result.err);
  CHECK(result.exit_code == 0);
  const std::vector<std::string> files = json_file_names(run.run_dir);
  CHECK(files.size() == 8); // 4 shared manifests, implementation, run, samples, summary
  CHECK_THAT(result.out, Contains("verified  " + run.run_dir.string() + "\n"));
  CHECK_THAT(result.out, Contains("subjects  " + std::to_string(files.size()) + "\n"));

  const auto digest = run_kibench("digest --verify " + quoted(run.run_dir));
  INFO("digest stdout: " << digest.out << "\ndigest stderr: " << digest.err);
  CHECK(digest.exit_code == 0);
  CHECK_THAT(digest.out, !Contains("attestation"));
}

TEST_CASE("The attestation is a DSSE envelope over an in-toto Statement of every run file", "[attest][cli]") {
  const AttestedRun &run = attested_run();
  const fs::path envelope_file = run.run_dir / "attestation.dsse.json";
  const Value envelope = kibench::json::parse_file(envelope_file);
  CHECK(envelope.find("payloadType")->as_string() == "application/vnd.in-toto+json");
  REQUIRE(envelope.find("signatures")->as_array().size() == 1);
  CHECK(envelope.find("signatures")->as_array()[0].find("keyid")->as_string() ==
        kibench::attest::read_public_key(run.signer_pub).keyid());

  const Value statement = statement_of(envelope_file);
  CHECK(statement.find("_type")->as_string() == "https://in-toto.io/Statement/v1");
  CHECK(statement.find("predicateType")->as_string() == "https://kibench.dev/attestation/run/v1");
  std::vector<std::string> names;
  for (const auto &subject : statement.find("subject")->as_array()) {
    const std::string name = subject.find("name")->as_string();
    names.push_back(name);
    CAPTURE(name);
    CHECK("sha256:" + subject.find("digest")->find("sha256")->as_string() ==
          kibench::sha256_digest(read_text(run.run_dir / name)));
  }
  CHECK(names == json_file_names(run.run_dir));

  const Value &predicate = *statement.find("predicate");
  CHECK(predicate.find("kibench")->find("version")->as_string() == KIBENCH_VERSION);
  CHECK(predicate.find("createdAt")->as_string().ends_with("Z"));
  const auto &runs = predicate.find("runs")->as_array();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].find("file")->as_string() == "run.cpu-reference.json");
  CHECK(runs[0].find("digest")->as_string() ==
        kibench::manifest_digest(kibench::json::parse_file(run.run_dir / "run.cpu-reference.json")));
}

TEST_CASE("attest refuses to replace an attestation without --force", "[attest][cli]") {
  const AttestedRun &run = attested_run();
  RunCopy copy;
  const std::string before = read_text(copy.envelope());
  const auto again = run_kibench("attest " + quoted(copy.dir()) + " --key " + quoted(run.signer_key));
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Contains("already exists"));
  CHECK(read_text(copy.envelope()) == before);
  const auto forced =
      run_kibench("attest --force " + quoted(copy.dir()) + " --key " + quoted(run.signer_key));
  CHECK(forced.exit_code == 0);
  CHECK(verify(copy.dir(), run.signer_pub).exit_code == 0);
}

TEST_CASE("attest refuses a secret key that others may read", "[attest][cli]") {
  const AttestedRun &run = attested_run();
  RunCopy copy;
  fs::remove(copy.envelope());
  TempDir keys;
  const fs::path shared_key = keys.path() / "shared.key";
  fs::copy_file(run.signer_key, shared_key);
  fs::permissions(shared_key, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
  const auto result = run_kibench("attest " + quoted(copy.dir()) + " --key " + quoted(shared_key));
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Contains("permissions 0644 are too open"));
  CHECK_FALSE(fs::exists(copy.envelope()));
}

TEST_CASE("verify detects a changed byte in any subject", "[attest][cli][tamper]") {
  const AttestedRun &run = attested_run();
  for (const std::string &name : json_file_names(run.run_dir)) {
    CAPTURE(name);
    RunCopy copy;
    std::string text = read_text(copy.dir() / name);
    const std::size_t middle = text.size() / 2;
    text[middle] = text[middle] == '1' ? '2' : '1';
    write_file(copy.dir() / name, text);
    expect_check_failure(verify(copy.dir(), run.signer_pub),
                         "subject " + name + ": sha256 mismatch (expected ");
  }
}

TEST_CASE("verify detects a changed byte in the signed payload", "[attest][cli][tamper]") {
  const AttestedRun &run = attested_run();
  RunCopy copy;
  SECTION("one base64 character of the payload") {
    Value envelope = kibench::json::parse_file(copy.envelope());
    std::string payload = envelope.find("payload")->as_string();
    const std::size_t middle = payload.size() / 2;
    payload[middle] = payload[middle] == 'A' ? 'B' : 'A';
    set_envelope_member(copy.envelope(), "payload", payload);
  }
  SECTION("a subject digest in the statement, re-encoded") {
    // An attacker who changed a file and updated its digest to match.
    std::string statement = kibench::json::canonical(statement_of(copy.envelope()));
    const std::size_t at = statement.find("\"sha256\":\"") + 10;
    statement[at] = statement[at] == '0' ? '1' : '0';
    set_envelope_member(copy.envelope(), "payload", kibench::attest::encode_base64(statement));
  }
  SECTION("the payload type") {
    set_envelope_member(copy.envelope(), "payloadType", "application/json");
  }
  expect_check_failure(verify(copy.dir(), run.signer_pub),
                       "signature does not verify with " + run.signer_pub.string());
}

TEST_CASE("verify detects a changed byte in the signature", "[attest][cli][tamper]") {
  const AttestedRun &run = attested_run();
  RunCopy copy;
  Value envelope = kibench::json::parse_file(copy.envelope());
  Value &signature = envelope.as_object().find("signatures")->as_array()[0];
  auto bytes = kibench::attest::decode_base64(signature.find("sig")->as_string());
  REQUIRE(bytes);
  REQUIRE(bytes->size() == 64);
  (*bytes)[20] = static_cast<char>((*bytes)[20] ^ 0x01);
  signature.as_object().set("sig", kibench::attest::encode_base64(*bytes));
  write_file(copy.envelope(), kibench::json::pretty(envelope));
  expect_check_failure(verify(copy.dir(), run.signer_pub), "signature does not verify with");
}

TEST_CASE("verify detects an added file and a removed one", "[attest][cli][tamper]") {
  const AttestedRun &run = attested_run();
  RunCopy copy;
  SECTION("added") {
    write_file(copy.dir() / "extra.json", "{}\n");
    expect_check_failure(verify(copy.dir(), run.signer_pub), "file extra.json is not a subject");
  }
  SECTION("removed") {
    fs::remove(copy.dir() / "samples.cpu-reference.json");
    expect_check_failure(verify(copy.dir(), run.signer_pub), "subject samples.cpu-reference.json: missing");
  }
}

TEST_CASE("verify with the wrong public key fails on the keyid", "[attest][cli][tamper]") {
  const AttestedRun &run = attested_run();
  const std::string other_keyid = kibench::attest::read_public_key(run.other_pub).keyid();
  expect_check_failure(verify(run.run_dir, run.other_pub),
                       "does not match " + run.other_pub.string() + " (keyid " + other_keyid + ")");
}

TEST_CASE("verify reports a malformed or missing attestation as bad input", "[attest][cli]") {
  const AttestedRun &run = attested_run();
  RunCopy copy;
  SECTION("truncated") {
    const std::string text = read_text(copy.envelope());
    write_file(copy.envelope(), text.substr(0, text.size() / 2));
    const auto result = verify(copy.dir(), run.signer_pub);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Contains("attestation.dsse.json"));
  }
  SECTION("missing") {
    fs::remove(copy.envelope());
    const auto result = verify(copy.dir(), run.signer_pub);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Contains("attestation.dsse.json: cannot read"));
  }
  SECTION("a secret key given as the public key") {
    const auto result = verify(copy.dir(), run.signer_key);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Contains(run.signer_key.string()));
  }
}

// The keys are standard: OpenSSL checks a kibench signature with kibench's
// public key, and kibench signs and verifies with a key OpenSSL made.
TEST_CASE("openssl verifies a kibench signature, and kibench signs with an openssl key",
          "[attest][cli][openssl]") {
  const AttestedRun &run = attested_run();
  TempDir tmp;
  const Value envelope = kibench::json::parse_file(run.run_dir / "attestation.dsse.json");
  const auto payload = kibench::attest::decode_base64(envelope.find("payload")->as_string());
  const auto signature =
      kibench::attest::decode_base64(envelope.find("signatures")->as_array()[0].find("sig")->as_string());
  REQUIRE(payload);
  REQUIRE(signature);
  // DSSE signs the pre-authentication encoding of the payload, not the payload.
  const std::string signed_bytes = kibench::attest::pae(envelope.find("payloadType")->as_string(), *payload);
  write_file(tmp.path() / "pae.bin", signed_bytes);
  write_file(tmp.path() / "sig.bin", *signature);
  const auto openssl_verify = [&](const fs::path &message) {
    return run_command("openssl pkeyutl -verify -pubin -inkey " + quoted(run.signer_pub) + " -rawin -in " +
                       quoted(message) + " -sigfile " + quoted(tmp.path() / "sig.bin"));
  };
  const auto verified = openssl_verify(tmp.path() / "pae.bin");
  INFO("openssl stdout: " << verified.out << "\nstderr: " << verified.err);
  CHECK(verified.exit_code == 0);
  CHECK_THAT(verified.out, Contains("Signature Verified Successfully"));
  std::string changed = signed_bytes;
  changed.back() = static_cast<char>(changed.back() ^ 1);
  write_file(tmp.path() / "changed.bin", changed);
  CHECK(openssl_verify(tmp.path() / "changed.bin").exit_code != 0);

  const fs::path key = tmp.path() / "openssl.key";
  const fs::path pub = tmp.path() / "openssl.pub";
  REQUIRE(run_command("openssl genpkey -algorithm ed25519 -out " + quoted(key)).exit_code == 0);
  REQUIRE(run_command("openssl pkey -in " + quoted(key) + " -pubout -out " + quoted(pub)).exit_code == 0);
  REQUIRE(::chmod(key.c_str(), 0600) == 0);
  const RunCopy copy;
  const auto attest = run_kibench("attest " + quoted(copy.dir()) + " --force --key " + quoted(key));
  INFO("attest stderr: " << attest.err);
  CHECK(attest.exit_code == 0);
  const auto verified_by_kibench = verify(copy.dir(), pub);
  INFO("verify stdout: " << verified_by_kibench.out << "\nstderr: " << verified_by_kibench.err);
  CHECK(verified_by_kibench.exit_code == 0);
  CHECK(verify(copy.dir(), run.signer_pub).exit_code == 1);
}
