// Ed25519 keys as the standard PEM files OpenSSL, Python's cryptography,
// Go and sigstore read and write (RFC 8410, RFC 7468):
//
//   -----BEGIN PUBLIC KEY-----    SubjectPublicKeyInfo, DER:
//     30 2a 30 05 06 03 2b 65 70 03 21 00 || 32 key bytes
//   -----BEGIN PRIVATE KEY-----   PKCS#8 OneAsymmetricKey, DER:
//     30 2e 02 01 00 30 05 06 03 2b 65 70 04 22 04 20 || 32-byte seed
//
// (2b 65 70 is the OID 1.3.101.112, id-Ed25519.) A private key may also be
// the version-2 form that appends the public key ([1] 81 21 00 || 32
// bytes); it is read, and refused when that public key is not the seed's.
// The private key is decoded from a wiped buffer straight into the key's
// own storage, as the older kibench key files are (key_files.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "lib/attest/ed25519.hpp"
#include "lib/attest/secret_buffer.hpp"

namespace kibench::attest {

// A PEM private key of an Ed25519 seed: 119 bytes with its line breaks.
inline constexpr std::size_t private_key_pem_capacity = 160;
using PrivateKeyPem = SecretBuffer<private_key_pem_capacity>;

std::string public_key_pem(const PublicKey &key);
void compose_private_key_pem(const SecretKey &key, PrivateKeyPem &out);

// Whether `text` holds a PEM block (a "-----BEGIN " line) rather than an
// older kibench key file.
bool looks_like_pem(std::string_view text);

// InputError naming `path` when the text is no PEM block of the expected
// label, its base64 is damaged, or the DER is not an Ed25519 key (an RSA or
// an encrypted key is named as such).
PublicKey parse_public_key_pem(std::string_view text, const std::filesystem::path &path);
SecretKey parse_private_key_pem(std::string_view text, const std::filesystem::path &path);

} // namespace kibench::attest
