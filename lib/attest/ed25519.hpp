// Ed25519 keys (RFC 8032) through libsodium. A SecretKey keeps its bytes in
// a wiped buffer and cannot be copied (a move wipes the source), so exactly
// one copy of a secret lives in memory and it is erased with the key.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "lib/attest/secret_buffer.hpp"

namespace kibench::attest {

inline constexpr std::size_t ed25519_seed_size = 32; // RFC 8032's private key
inline constexpr std::size_t ed25519_public_key_size = 32;
inline constexpr std::size_t ed25519_signature_size = 64;

using Ed25519Signature = std::array<unsigned char, ed25519_signature_size>;

struct PublicKey {
  std::array<unsigned char, ed25519_public_key_size> bytes{};

  // Lowercase hex SHA-256 of the 32 public-key bytes: how envelopes and key
  // files name the key (a hint for choosing a key, never trusted alone).
  [[nodiscard]] std::string keyid() const;

  // True when `signature` is a valid Ed25519 signature of `message` by this
  // key; a signature of any other length is simply not valid.
  [[nodiscard]] bool verifies(std::string_view message, std::span<const unsigned char> signature) const;

  friend bool operator==(const PublicKey &, const PublicKey &) = default;
};

class SecretKey {
public:
  // A new key from the operating system's random source.
  static SecretKey generate();
  // The key an RFC 8032 private key (the 32-byte seed) determines.
  explicit SecretKey(std::span<const unsigned char, ed25519_seed_size> seed);

  SecretKey(const SecretKey &) = delete;
  SecretKey &operator=(const SecretKey &) = delete;
  SecretKey(SecretKey &&) noexcept = default;
  SecretKey &operator=(SecretKey &&) noexcept = default;

  [[nodiscard]] const PublicKey &public_key() const { return public_key_; }
  [[nodiscard]] Ed25519Signature sign(std::string_view message) const;
  // The seed, for writing the key file; a view into the wiped storage.
  [[nodiscard]] std::span<const unsigned char, ed25519_seed_size> seed() const;

private:
  struct FromRandomSource {};
  explicit SecretKey(FromRandomSource);

  // libsodium's 64-byte form: the seed followed by the public key.
  SecretBuffer<64> secret_;
  PublicKey public_key_;
};

} // namespace kibench::attest
