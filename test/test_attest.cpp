// Attestation building blocks: DSSE's PAE bytes, base64, Ed25519 against
// RFC 8032, envelopes, in-toto statements and the key files.
#include <catch2/catch.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "lib/attest/base64.hpp"
#include "lib/attest/dsse_envelope.hpp"
#include "lib/attest/ed25519.hpp"
#include "lib/attest/key_files.hpp"
#include "lib/attest/pae.hpp"
#include "lib/attest/statement.hpp"
#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "test/cli_process.hpp"

namespace fs = std::filesystem;
using namespace kibench::attest;
using Catch::Matchers::Contains;

namespace {

std::string from_hex(std::string_view hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

std::string as_text(std::span<const unsigned char> bytes) {
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

// RFC 8032 section 7.1, TEST 1 (the empty message).
const std::string kRfcSeed = from_hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const std::string kRfcPublicKey =
    from_hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const std::string kRfcSignature =
    from_hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a"
             "33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");

SecretKey rfc_key() {
  std::array<unsigned char, ed25519_seed_size> seed{};
  std::copy(kRfcSeed.begin(), kRfcSeed.end(), seed.begin());
  return SecretKey(seed);
}

void write_text(const fs::path &path, const std::string &text, mode_t mode) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

} // namespace

TEST_CASE("PAE matches the DSSE protocol's worked example", "[attest][dsse]") {
  CHECK(pae("http://example.com/HelloWorld", "hello world") ==
        "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
}

TEST_CASE("PAE counts bytes, not characters, and keeps the body verbatim", "[attest][dsse]") {
  CHECK(pae("", "") == "DSSEv1 0  0 ");
  CHECK(pae("t", "\xc3\xa9") == "DSSEv1 1 t 2 \xc3\xa9"); // "é" is two UTF-8 bytes
  const std::string body("a b\n\0c", 6);
  static constexpr char expected[] = "DSSEv1 28 application/vnd.in-toto+json 6 a b\n\0c";
  CHECK(pae(in_toto_payload_type, body) == std::string(expected, sizeof expected - 1));
  CHECK(pae("x", std::string(1000, 'z')).starts_with("DSSEv1 1 x 1000 zzz"));
}

TEST_CASE("base64 writes the standard alphabet with padding and round-trips every byte", "[attest][base64]") {
  CHECK(encode_base64(std::string_view("hello world")) == "aGVsbG8gd29ybGQ=");
  CHECK(encode_base64(std::string_view("")).empty());
  CHECK(encode_base64(std::string_view("\xfb\xff", 2)) == "+/8=");
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t length = 0; length <= all.size(); length += 37) {
    const std::string bytes = all.substr(all.size() - length);
    CAPTURE(length);
    CHECK(decode_base64(encode_base64(bytes)) == bytes);
  }
}

TEST_CASE("base64 reads the four forms DSSE allows and nothing else", "[attest][base64]") {
  CHECK(decode_base64("aGVsbG8gd29ybGQ=") == "hello world");
  CHECK(decode_base64("aGVsbG8gd29ybGQ") == "hello world");
  CHECK(decode_base64("-_8=") == std::string("\xfb\xff", 2));
  CHECK(decode_base64("-_8") == std::string("\xfb\xff", 2));
  CHECK_FALSE(decode_base64("aGVs bG8="));
  CHECK_FALSE(decode_base64("aGVsbG8*"));
  CHECK_FALSE(decode_base64("+_8="));              // two alphabets mixed
  CHECK_FALSE(decode_base64("aGVsbG8gd29ybGQ==")); // wrong padding

  std::array<unsigned char, 4> small{};
  CHECK_FALSE(decode_base64_into("aGVsbG8gd29ybGQ=", small));
  CHECK(decode_base64_into("aGVsbA==", small) == 4u);
}

TEST_CASE("Ed25519 keys reproduce RFC 8032 test 1", "[attest][ed25519]") {
  const SecretKey key = rfc_key();
  CHECK(as_text(key.public_key().bytes) == kRfcPublicKey);
  CHECK(as_text(key.seed()) == kRfcSeed);
  const Ed25519Signature signature = key.sign("");
  CHECK(as_text(signature) == kRfcSignature);
  CHECK(key.public_key().verifies("", signature));
}

TEST_CASE("Ed25519 verification rejects any change", "[attest][ed25519]") {
  const SecretKey key = SecretKey::generate();
  const std::string message = "kibench run attestation";
  Ed25519Signature signature = key.sign(message);
  CHECK(key.public_key().verifies(message, signature));
  CHECK_FALSE(key.public_key().verifies("kibench run attestatioN", signature));
  CHECK_FALSE(SecretKey::generate().public_key().verifies(message, signature));
  CHECK_FALSE(key.public_key().verifies(message, std::span(signature).first(63)));
  signature[10] ^= 0x01;
  CHECK_FALSE(key.public_key().verifies(message, signature));
}

TEST_CASE("A moved secret key leaves nothing behind and still signs", "[attest][ed25519]") {
  SecretKey original = rfc_key();
  const SecretKey moved = std::move(original);
  CHECK(as_text(moved.sign("")) == kRfcSignature);
  // The source's storage was wiped by the move (it is still a valid object).
  CHECK(as_text(original.seed()) == std::string(ed25519_seed_size, '\0'));
}

TEST_CASE("The keyid is the hex SHA-256 of the public key bytes", "[attest][ed25519]") {
  const SecretKey key = rfc_key();
  // sha256 of d75a98...511a, by `printf ... | xxd -r -p | sha256sum`.
  const std::string keyid = key.public_key().keyid();
  CHECK(keyid.size() == 64);
  CHECK(keyid == "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9");
}

TEST_CASE("A signed envelope survives JSON and verifies only with its key", "[attest][dsse]") {
  const SecretKey key = SecretKey::generate();
  const SecretKey other = SecretKey::generate();
  const Envelope signed_envelope = sign_envelope(std::string(in_toto_payload_type), "{\"a\":1}", key);
  const std::string text = kibench::json::canonical(envelope_json(signed_envelope));
  Envelope envelope = parse_envelope(text, "envelope.json");
  CHECK(envelope.payload == "{\"a\":1}");
  CHECK(envelope.payload_type == in_toto_payload_type);
  REQUIRE(envelope.signatures.size() == 1);
  CHECK(envelope.signatures[0].keyid == key.public_key().keyid());

  CHECK(check_signature(envelope, key.public_key()) == SignatureCheck::verified);
  CHECK(check_signature(envelope, other.public_key()) == SignatureCheck::no_matching_keyid);

  SECTION("the keyid is only a hint: claiming the other key does not make it verify") {
    envelope.signatures[0].keyid = other.public_key().keyid();
    CHECK(check_signature(envelope, other.public_key()) == SignatureCheck::does_not_verify);
  }
  SECTION("a signature without a keyid is tried") {
    envelope.signatures[0].keyid.clear();
    CHECK(check_signature(envelope, key.public_key()) == SignatureCheck::verified);
    CHECK(check_signature(envelope, other.public_key()) == SignatureCheck::does_not_verify);
  }
  SECTION("the payload type is signed too") {
    envelope.payload_type = "application/json";
    CHECK(check_signature(envelope, key.public_key()) == SignatureCheck::does_not_verify);
  }
  SECTION("the payload is signed") {
    envelope.payload = "{\"a\":2}";
    CHECK(check_signature(envelope, key.public_key()) == SignatureCheck::does_not_verify);
  }
  SECTION("a second, bad signature does not hide a good one") {
    envelope.signatures.insert(envelope.signatures.begin(), {"", std::string(64, 'x')});
    CHECK(check_signature(envelope, key.public_key()) == SignatureCheck::verified);
  }
}

TEST_CASE("Malformed envelopes are input errors that name the field", "[attest][dsse]") {
  const auto rejects = [](const std::string &text, const std::string &field) {
    CAPTURE(text);
    CHECK_THROWS_WITH(parse_envelope(text, "e.json"), Contains(field));
    CHECK_THROWS_AS(parse_envelope(text, "e.json"), kibench::InputError);
  };
  rejects("[]", "$: expected a DSSE envelope object");
  rejects(R"({"payloadType":"t","signatures":[{"sig":"AA=="}]})", "no \"payload\"");
  rejects(R"({"payload":"e30=","signatures":[{"sig":"AA=="}]})", "no \"payloadType\"");
  rejects(R"({"payload":"e30*","payloadType":"t","signatures":[{"sig":"AA=="}]})", "$.payload: not base64");
  rejects(R"({"payload":"e30=","payloadType":"t","signatures":[]})",
          "$.signatures: expected a non-empty array");
  rejects(R"({"payload":"e30=","payloadType":"t","signatures":[{"keyid":1,"sig":"AA=="}]})",
          "$.signatures[0].keyid");
  rejects(R"({"payload":"e30=","payloadType":"t","signatures":[{"sig":"A A="}]})", "$.signatures[0].sig");
  rejects("{\"payload\":", "e.json");
}

TEST_CASE("Statements round-trip and malformed ones are refused", "[attest][statement]") {
  Statement statement;
  statement.subjects = {{"a.json", std::string(64, 'a')}, {"b.json", std::string(64, '0')}};
  statement.predicate_type = "https://example.com/p";
  statement.predicate = kibench::json::Object{{"x", 1}};
  const std::string text = kibench::json::canonical(statement_json(statement));
  CHECK(text.starts_with(R"({"_type":"https://in-toto.io/Statement/v1","predicate":{"x":1},)"));
  const Statement parsed = parse_statement(text, "s");
  REQUIRE(parsed.subjects.size() == 2);
  CHECK(parsed.subjects[1].name == "b.json");
  CHECK(parsed.subjects[1].sha256 == std::string(64, '0'));
  CHECK(parsed.predicate_type == "https://example.com/p");
  CHECK(parsed.predicate == statement.predicate);

  const auto rejects = [](const std::string &body, const std::string &why) {
    const std::string document =
        R"({"_type":"https://in-toto.io/Statement/v1","predicateType":"p",)" + body + "}";
    CAPTURE(document);
    CHECK_THROWS_WITH(parse_statement(document, "s"), Contains(why));
  };
  const std::string digest = R"("digest":{"sha256":")" + std::string(64, 'a') + "\"}";
  rejects(R"("subject":[{"name":"../x.json",)" + digest + "}]", "$.subject[0].name: expected a file name");
  rejects(R"("subject":[{"name":"dir/x.json",)" + digest + "}]", "$.subject[0].name");
  rejects(R"("subject":[{"name":"x.json","digest":{"sha256":"ABC"}}])", "$.subject[0].digest.sha256");
  rejects(R"("subject":[{"name":"x.json","digest":{"sha512":"ab"}}])", "$.subject[0].digest.sha256");
  rejects(R"("subject":[{"name":"x.json",)" + digest + R"(},{"name":"x.json",)" + digest + "}]",
          "appears twice");
  CHECK_THROWS_WITH(parse_statement(R"({"_type":"https://in-toto.io/Statement/v0.1","subject":[]})", "s"),
                    Contains("$._type"));
}

TEST_CASE("Key files round-trip, and the secret one is private and checked", "[attest][keys]") {
  kibench::test::TempDir tmp;
  const KeyPairPaths paths = key_pair_paths(tmp.path() / "ci.v2");
  CHECK(paths.secret_key.filename() == "ci.v2.key");
  CHECK(paths.public_key.filename() == "ci.v2.pub");

  const SecretKey key = rfc_key();
  write_key_pair(key, paths, false);
  CHECK(fs::status(paths.secret_key).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(read_public_key(paths.public_key) == key.public_key());
  CHECK(as_text(read_secret_key(paths.secret_key).seed()) == kRfcSeed);

  // RFC 8410's forms, byte for byte as `openssl pkey` writes this key.
  const std::string secret_text = kibench::test::read_text(paths.secret_key);
  CHECK(secret_text == "-----BEGIN PRIVATE KEY-----\n"
                       "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
                       "-----END PRIVATE KEY-----\n");
  CHECK(kibench::test::read_text(paths.public_key) == "-----BEGIN PUBLIC KEY-----\n"
                                                       "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
                                                       "-----END PUBLIC KEY-----\n");

  SECTION("an existing pair is not overwritten without replace") {
    const SecretKey other = SecretKey::generate();
    CHECK_THROWS_WITH(write_key_pair(other, paths, false), Contains("already exists"));
    CHECK(kibench::test::read_text(paths.secret_key) == secret_text);
    write_key_pair(other, paths, true);
    CHECK(read_public_key(paths.public_key) == other.public_key());
    CHECK(fs::status(paths.secret_key).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  }
  SECTION("an existing public key alone stops the pair before anything is written") {
    fs::remove(paths.secret_key);
    CHECK_THROWS_WITH(write_key_pair(key, paths, false), Contains("ci.v2.pub: already exists"));
    CHECK_FALSE(fs::exists(paths.secret_key));
  }
  SECTION("a secret key others can read or write is refused") {
    for (const mode_t mode : {0640, 0604, 0620}) {
      REQUIRE(::chmod(paths.secret_key.c_str(), mode) == 0);
      CAPTURE(mode);
      CHECK_THROWS_WITH(read_secret_key(paths.secret_key), Contains("are too open"));
    }
  }
  SECTION("a damaged PEM secret key is refused without echoing it") {
    const fs::path bad = tmp.path() / "bad.key";
    const auto refuses = [&](const std::string &text, const std::string &why) {
      write_text(bad, text, 0600);
      CAPTURE(text);
      CHECK_THROWS_WITH(read_secret_key(bad), Contains(why) && !Contains("MC4CAQAw"));
    };
    const std::string body = "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n";
    refuses("-----BEGIN PRIVATE KEY-----\n" + body, "no \"-----END PRIVATE KEY-----\" line");
    refuses("-----BEGIN PRIVATE KEY-----\nMC4CAQAw!BQYDK2Vw\n-----END PRIVATE KEY-----\n", "damaged base64");
    refuses("-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + body + "-----END ENCRYPTED PRIVATE KEY-----\n",
            "an encrypted private key");
    refuses("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
            "-----END PUBLIC KEY-----\n",
            "is not a private key");
    // The seed's DER under another OID: X25519 (1.3.101.110).
    refuses("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VuBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
            "-----END PRIVATE KEY-----\n",
            "an X25519 key, not Ed25519");
    // Version 2 with the public key of RFC 8032's second test key attached.
    refuses("-----BEGIN PRIVATE KEY-----\n"
            "MFECAQEwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9ggSEAPUAXw+hDiVqStwqnTRt+vJyY\n"
            "LM8uxJaMwM1V8Sr0Zgw=\n-----END PRIVATE KEY-----\n",
            "the public key it carries is not its private key's");
  }
  SECTION("a version-2 PKCS#8 key carrying its own public key is read") {
    const fs::path v2 = tmp.path() / "v2.key";
    write_text(v2,
               "-----BEGIN PRIVATE KEY-----\n"
               "MFECAQEwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9ggSEA11qYAYKxCrfVS/7TyWQHOg7h\n"
               "cvPapiMlrwIaaPcHURo=\n-----END PRIVATE KEY-----\n",
               0600);
    CHECK(read_secret_key(v2).public_key() == key.public_key());
  }
  SECTION("a PEM public key of another kind is named") {
    const fs::path bad = tmp.path() / "bad.pub";
    write_text(bad, secret_text, 0644);
    CHECK_THROWS_WITH(read_public_key(bad), Contains("holds a private key") && Contains("-pubout"));
    // An RSA SubjectPublicKeyInfo (a toy modulus: the algorithm OID is what is read).
    write_text(bad,
               "-----BEGIN PUBLIC KEY-----\nMCAwDQYJKoZIhvcNAQEBBQADDwAwDAIHAMPXJjGRjAIBAw==\n"
               "-----END PUBLIC KEY-----\n",
               0644);
    CHECK_THROWS_WITH(read_public_key(bad), Contains("an RSA key, not Ed25519"));
    write_text(bad, "no key here\n", 0644);
    CHECK_THROWS_WITH(read_public_key(bad), Contains("bad.pub"));
  }
}

// The files of earlier kibench versions: a JSON public key and a line-based
// secret key, still read (and checked) as before.
TEST_CASE("Key files of the earlier format are still read and checked", "[attest][keys]") {
  kibench::test::TempDir tmp;
  const SecretKey key = rfc_key();
  const fs::path secret = tmp.path() / "old.key";
  const fs::path pub = tmp.path() / "old.pub";
  const std::string keyid = key.public_key().keyid();
  const std::string secret_text = "# kibench secret key: keep it private (mode 0600). The public key is in "
                                  "the .pub file.\ntype: ed25519\nkeyid: " +
                                  keyid + "\nseed: nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=\n";
  write_text(secret, secret_text, 0600);
  write_text(pub,
             "{\n  \"type\": \"ed25519\",\n  \"keyid\": \"" + keyid +
                 "\",\n  \"publicKey\": \"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\"\n}\n",
             0644);
  CHECK(as_text(read_secret_key(secret).seed()) == kRfcSeed);
  CHECK(read_public_key(pub) == key.public_key());

  SECTION("a damaged secret key file is refused without echoing the seed") {
    const fs::path bad = tmp.path() / "bad.key";
    const auto refuses = [&](const std::string &text, const std::string &why) {
      write_text(bad, text, 0600);
      CAPTURE(text);
      CHECK_THROWS_WITH(read_secret_key(bad), Contains(why) && !Contains("nWGxne"));
    };
    std::string other_keyid = secret_text;
    other_keyid.replace(other_keyid.find("keyid: ") + 7, 1, "0");
    refuses(other_keyid, "does not match the key it holds");
    refuses("type: ed25519\nkeyid: x\n", "no \"seed\" line");
    refuses("type: ed25519\nkeyid: x\nseed: nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=\nsee: 1\n",
            "line 4: unknown field");
    refuses("type: ed25519\ntype: ed25519\n", "line 2: field appears twice");
    refuses("type: rsa\nkeyid: x\nseed: nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=\n",
            "\"rsa\" is not supported");
    refuses("type: ed25519\nkeyid: x\nseed: nWGxne\n", "seed: expected the base64 of 32 bytes");
    refuses(std::string(2000, '#'), "not a kibench secret key file");
  }
  SECTION("a public key file whose keyid was edited is refused") {
    std::string text = kibench::test::read_text(pub);
    text.replace(text.find(keyid), 1, "0");
    write_text(pub, text, 0644);
    CHECK_THROWS_WITH(read_public_key(pub), Contains("does not match the key it holds"));
  }
}

TEST_CASE("a key file with two PEM blocks is refused, not read as its first", "[attest][keys]") {
  kibench::test::TempDir tmp;
  const KeyPairPaths paths = key_pair_paths(tmp.path() / "ci");
  write_key_pair(rfc_key(), paths, false);
  const std::string one = kibench::test::read_text(paths.public_key);
  const SecretKey other = SecretKey::generate();
  const KeyPairPaths other_paths = key_pair_paths(tmp.path() / "other");
  write_key_pair(other, other_paths, false);
  std::ofstream(paths.public_key, std::ios::trunc) << one << kibench::test::read_text(other_paths.public_key);
  CHECK_THROWS_WITH(read_public_key(paths.public_key),
                    Contains("PEM: a second block (\"-----BEGIN PUBLIC KEY-----\") after \"-----BEGIN PUBLIC "
                             "KEY-----\"; a key file holds one key"));
  // Text around the one block is still ignored, as OpenSSL ignores it.
  std::ofstream(paths.public_key, std::ios::trunc) << "a comment\n" << one << "trailing words\n";
  CHECK(read_public_key(paths.public_key) == rfc_key().public_key());
}
