#include "lib/attest/pem_keys.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include <fmt/core.h>
#include <sodium.h>

#include "lib/attest/base64.hpp"
#include "lib/error.hpp"

namespace kibench::attest {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view public_label = "PUBLIC KEY";
constexpr std::string_view private_label = "PRIVATE KEY";

// SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING (0 unused bits) }
constexpr std::array<unsigned char, 12> spki_prefix = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                                       0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
// SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32) } }
constexpr std::array<unsigned char, 16> pkcs8_prefix = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
                                                        0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
// Version 2 (RFC 5958): the same with INTEGER 1, and the public key as
// [1] IMPLICIT BIT STRING after the seed.
constexpr std::array<unsigned char, 16> pkcs8_v2_prefix = {0x30, 0x51, 0x02, 0x01, 0x01, 0x30, 0x05, 0x06,
                                                           0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
constexpr std::array<unsigned char, 3> pkcs8_v2_public_tag = {0x81, 0x21, 0x00};

constexpr std::size_t spki_size = spki_prefix.size() + ed25519_public_key_size;
constexpr std::size_t pkcs8_size = pkcs8_prefix.size() + ed25519_seed_size;
constexpr std::size_t pkcs8_v2_size = pkcs8_size + pkcs8_v2_public_tag.size() + ed25519_public_key_size;

// The body of one PEM block: views into the text it was found in.
struct PemBlock {
  std::string_view label;
  std::string_view body; // base64 with line breaks
};

std::string_view trim_line_end(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  return line;
}

// The label of a "-----BEGIN LABEL-----" line, if it is one.
std::optional<std::string_view> begin_label(std::string_view line) {
  constexpr std::string_view begin = "-----BEGIN ", dashes = "-----";
  line = trim_line_end(line);
  if (!line.starts_with(begin) || !line.ends_with(dashes) || line.size() < begin.size() + dashes.size())
    return std::nullopt;
  return line.substr(begin.size(), line.size() - begin.size() - dashes.size());
}

// The one PEM block of `text`; text outside it is ignored, as OpenSSL
// ignores it (RFC 7468 section 5.2). A second block is refused: which key
// was meant is not for kibench to guess.
PemBlock only_block(std::string_view text, const fs::path &path) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const auto label = begin_label(line);
    if (!label) continue;
    const std::string end_line = fmt::format("-----END {}-----", *label);
    const std::size_t body_start = std::min(at, text.size());
    std::size_t scan = body_start;
    while (scan < text.size()) {
      const std::size_t stop = std::min(text.find('\n', scan), text.size());
      if (trim_line_end(text.substr(scan, stop - scan)) == end_line) {
        for (std::size_t rest = stop + 1; rest < text.size();) {
          const std::size_t next = std::min(text.find('\n', rest), text.size());
          if (const auto other = begin_label(text.substr(rest, next - rest)))
            throw InputError(
                fmt::format("{}: PEM: a second block (\"-----BEGIN {}-----\") after \"-----BEGIN "
                            "{}-----\"; a key file holds one key",
                            path.string(), *other, *label));
          rest = next + 1;
        }
        return PemBlock{*label, text.substr(body_start, scan - body_start)};
      }
      scan = stop + 1;
    }
    throw InputError(
        fmt::format("{}: PEM: no \"{}\" line after \"-----BEGIN {}-----\"", path.string(), end_line, *label));
  }
  throw InputError(fmt::format("{}: not a key file: no PEM \"-----BEGIN\" line", path.string()));
}

// What a DER key of another algorithm is, from the OID it carries; empty
// when none is recognized.
std::string_view algorithm_in(std::span<const unsigned char> der) {
  struct Known {
    std::string_view name;
    std::span<const unsigned char> oid;
  };
  static constexpr std::array<unsigned char, 11> rsa = {0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
                                                        0xf7, 0x0d, 0x01, 0x01, 0x01};
  static constexpr std::array<unsigned char, 9> ec = {0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};
  static constexpr std::array<unsigned char, 5> x25519 = {0x06, 0x03, 0x2b, 0x65, 0x6e};
  static constexpr std::array<unsigned char, 5> ed448 = {0x06, 0x03, 0x2b, 0x65, 0x71};
  const std::array<Known, 4> known = {Known{"an RSA key", rsa}, Known{"an elliptic-curve (ECDSA) key", ec},
                                      Known{"an X25519 key", x25519}, Known{"an Ed448 key", ed448}};
  for (const Known &k : known)
    if (std::search(der.begin(), der.end(), k.oid.begin(), k.oid.end()) != der.end()) return k.name;
  return {};
}

[[noreturn]] void not_ed25519(const fs::path &path, std::string_view what,
                              std::span<const unsigned char> der) {
  const std::string_view other = algorithm_in(der);
  throw InputError(fmt::format("{}: {}", path.string(),
                               other.empty() ? fmt::format("not an Ed25519 {} (RFC 8410)", what)
                                             : fmt::format("{}, not Ed25519", other)));
}

// Decodes the block's base64 (line breaks ignored) into `out`; the number of
// bytes, or an InputError.
std::size_t decode_body(const PemBlock &block, std::span<unsigned char> out, const fs::path &path) {
  std::size_t written = 0;
  if (sodium_base642bin(out.data(), out.size(), block.body.data(), block.body.size(), " \t\r\n", &written,
                        nullptr, sodium_base64_VARIANT_ORIGINAL) != 0)
    throw InputError(
        fmt::format("{}: PEM {}: damaged base64, or longer than an Ed25519 key", path.string(), block.label));
  return written;
}

bool starts_with(std::span<const unsigned char> bytes, std::span<const unsigned char> prefix) {
  return bytes.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), bytes.begin());
}

void require_label(const PemBlock &block, std::string_view expected, const fs::path &path) {
  if (block.label == expected) return;
  if (expected == public_label && block.label.ends_with(private_label))
    throw InputError(fmt::format("{}: holds a private key (\"{}\"); give the public key (openssl pkey -in "
                                 "KEY -pubout)",
                                 path.string(), block.label));
  if (block.label == "ENCRYPTED PRIVATE KEY")
    throw InputError(fmt::format("{}: an encrypted private key; kibench reads unencrypted PKCS#8 (openssl "
                                 "pkey -in KEY -out PLAIN.key, mode 0600)",
                                 path.string()));
  throw InputError(fmt::format("{}: PEM \"{}\" is not a {} (expected \"-----BEGIN {}-----\": an Ed25519 "
                               "key in {} form)",
                               path.string(), block.label,
                               expected == public_label ? "public key" : "private key", expected,
                               expected == public_label ? "SubjectPublicKeyInfo" : "PKCS#8"));
}

std::string pem_lines(std::string_view label, std::string_view base64) {
  std::string out = fmt::format("-----BEGIN {}-----\n", label);
  for (std::size_t at = 0; at < base64.size(); at += 64) out += fmt::format("{}\n", base64.substr(at, 64));
  return out + fmt::format("-----END {}-----\n", label);
}

} // namespace

std::string public_key_pem(const PublicKey &key) {
  std::array<unsigned char, spki_size> der{};
  std::copy(spki_prefix.begin(), spki_prefix.end(), der.begin());
  std::copy(key.bytes.begin(), key.bytes.end(), der.begin() + spki_prefix.size());
  return pem_lines(public_label, encode_base64(der));
}

void compose_private_key_pem(const SecretKey &key, PrivateKeyPem &out) {
  SecretBuffer<pkcs8_size> der;
  der.append(std::string_view(reinterpret_cast<const char *>(pkcs8_prefix.data()), pkcs8_prefix.size()));
  der.append(std::string_view(reinterpret_cast<const char *>(key.seed().data()), key.seed().size()));
  // 48 bytes are 64 base64 characters: one PEM line.
  SecretBuffer<sodium_base64_ENCODED_LEN(pkcs8_size, sodium_base64_VARIANT_ORIGINAL)> base64;
  sodium_bin2base64(reinterpret_cast<char *>(base64.data()), base64.capacity(), der.data(), der.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  base64.resize(base64.capacity() - 1); // without the terminating NUL
  out.append("-----BEGIN PRIVATE KEY-----\n");
  out.append(base64.text());
  out.append("\n-----END PRIVATE KEY-----\n");
}

bool looks_like_pem(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (begin_label(text.substr(at, end - at))) return true;
    at = end + 1;
  }
  return false;
}

PublicKey parse_public_key_pem(std::string_view text, const fs::path &path) {
  const PemBlock block = only_block(text, path);
  require_label(block, public_label, path);
  std::array<unsigned char, 512> der{};
  const std::size_t size = decode_body(block, der, path);
  const std::span<const unsigned char> bytes(der.data(), size);
  if (size != spki_size || !starts_with(bytes, spki_prefix)) not_ed25519(path, "public key", bytes);
  PublicKey key;
  std::copy(bytes.begin() + spki_prefix.size(), bytes.end(), key.bytes.begin());
  return key;
}

SecretKey parse_private_key_pem(std::string_view text, const fs::path &path) {
  const PemBlock block = only_block(text, path);
  require_label(block, private_label, path);
  SecretBuffer<private_key_pem_capacity> der;
  der.resize(decode_body(block, der.unused(), path));
  const std::span<const unsigned char> bytes = der.bytes();
  const bool v1 = bytes.size() == pkcs8_size && starts_with(bytes, pkcs8_prefix);
  const bool v2 = bytes.size() == pkcs8_v2_size && starts_with(bytes, pkcs8_v2_prefix) &&
                  starts_with(bytes.subspan(pkcs8_size), pkcs8_v2_public_tag);
  if (!v1 && !v2) not_ed25519(path, "PKCS#8 private key", bytes);
  SecretKey key(bytes.subspan(pkcs8_prefix.size()).first<ed25519_seed_size>());
  if (v2) {
    const auto attached = bytes.subspan(pkcs8_size + pkcs8_v2_public_tag.size());
    if (!std::equal(attached.begin(), attached.end(), key.public_key().bytes.begin()))
      throw InputError(fmt::format("{}: the public key it carries is not its private key's: the file is "
                                   "damaged",
                                   path.string()));
  }
  return key;
}

} // namespace kibench::attest
