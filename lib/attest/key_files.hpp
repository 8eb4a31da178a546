// The files `kibench keygen` writes and `attest` / `verify` read: standard
// PEM (pem_keys.hpp), which OpenSSL and other tools read as they are.
//
// PREFIX.pub, for anyone: an Ed25519 SubjectPublicKeyInfo,
//   -----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----
// PREFIX.key, mode 0600, for its owner only: an unencrypted PKCS#8 key,
//   -----BEGIN PRIVATE KEY----- ... -----END PRIVATE KEY-----
//
// The files of earlier kibench versions are still read: a JSON public key
//   {"type": "ed25519", "keyid": "<hex SHA-256 of the key>", "publicKey": "<base64, 32 bytes>"}
// and a line-based secret key
//   # comment lines start with '#'
//   type: ed25519
//   keyid: <hex SHA-256 of the public key>
//   seed: <base64 of the 32-byte RFC 8032 private key>
//
// Either secret key file is read into a fixed buffer that is wiped
// afterwards, and the seed is decoded straight into the key's own wiped
// storage, leaving no copy of the secret on the heap.
#pragma once

#include <filesystem>

#include "lib/attest/ed25519.hpp"

namespace kibench::attest {

struct KeyPairPaths {
  std::filesystem::path secret_key; // PREFIX.key
  std::filesystem::path public_key; // PREFIX.pub
};

KeyPairPaths key_pair_paths(const std::filesystem::path &prefix);

// Writes both files whole under temporary names beside their targets (the
// secret one mode 0600 from its first byte), then renames them into place.
// An existing file is an InputError naming it, and nothing is written,
// unless `replace`: then the new pair replaces the old one only once both
// new files are written, so a pair that cannot be written leaves the old
// one as it was.
void write_key_pair(const SecretKey &key, const KeyPairPaths &paths, bool replace);

// InputError (naming the file and the problem) when the file is unreadable,
// malformed, no Ed25519 key, or (an older file) its keyid does not match
// its key.
PublicKey read_public_key(const std::filesystem::path &path);

// As read_public_key; also an InputError when the file may be read or
// written by group or others, as ssh refuses such keys: a secret that others
// could have read or replaced no longer identifies its owner.
SecretKey read_secret_key(const std::filesystem::path &path);

} // namespace kibench::attest
