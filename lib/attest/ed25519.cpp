#include "lib/attest/ed25519.hpp"

#include <stdexcept>

#include <sodium.h>

#include "lib/attest/sodium_runtime.hpp"
#include "lib/digest/digest.hpp"

namespace kibench::attest {

static_assert(crypto_sign_SEEDBYTES == ed25519_seed_size);
static_assert(crypto_sign_PUBLICKEYBYTES == ed25519_public_key_size);
static_assert(crypto_sign_BYTES == ed25519_signature_size);
static_assert(SecretBuffer<64>::capacity() == crypto_sign_SECRETKEYBYTES);

std::string PublicKey::keyid() const {
  const std::string digest =
      sha256_digest(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
  return digest.substr(digest.find(':') + 1);
}

bool PublicKey::verifies(std::string_view message, std::span<const unsigned char> signature) const {
  require_sodium();
  if (signature.size() != ed25519_signature_size) return false;
  return crypto_sign_verify_detached(signature.data(),
                                     reinterpret_cast<const unsigned char *>(message.data()), message.size(),
                                     bytes.data()) == 0;
}

SecretKey SecretKey::generate() {
  return SecretKey(FromRandomSource{});
}

SecretKey::SecretKey(FromRandomSource) {
  require_sodium();
  secret_.resize(secret_.capacity());
  if (crypto_sign_keypair(public_key_.bytes.data(), secret_.data()) != 0) {
    throw std::runtime_error("Ed25519 key generation failed");
  }
}

SecretKey::SecretKey(std::span<const unsigned char, ed25519_seed_size> seed) {
  require_sodium();
  secret_.resize(secret_.capacity());
  if (crypto_sign_seed_keypair(public_key_.bytes.data(), secret_.data(), seed.data()) != 0) {
    throw std::runtime_error("Ed25519 key derivation failed");
  }
}

Ed25519Signature SecretKey::sign(std::string_view message) const {
  require_sodium();
  Ed25519Signature signature{};
  crypto_sign_detached(signature.data(), nullptr, reinterpret_cast<const unsigned char *>(message.data()),
                       message.size(), secret_.data());
  return signature;
}

std::span<const unsigned char, ed25519_seed_size> SecretKey::seed() const {
  // The seed is the first half of libsodium's secret key.
  return std::span<const unsigned char, ed25519_seed_size>(secret_.data(), ed25519_seed_size);
}

} // namespace kibench::attest
