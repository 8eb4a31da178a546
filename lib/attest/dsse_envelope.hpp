// A DSSE envelope (secure-systems-lab/dsse envelope.md): a payload, its type,
// and signatures over PAE(type, payload). As JSON:
//   {"payload": "<base64>", "payloadType": "<type>",
//    "signatures": [{"keyid": "<hint>", "sig": "<base64>"}]}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/attest/ed25519.hpp"
#include "lib/json/value.hpp"

namespace kibench::attest {

inline constexpr std::string_view in_toto_payload_type = "application/vnd.in-toto+json";

struct EnvelopeSignature {
  std::string keyid;     // unauthenticated hint; may be empty
  std::string signature; // raw bytes
};

struct Envelope {
  std::string payload_type;
  std::string payload; // raw bytes, as signed
  std::vector<EnvelopeSignature> signatures;
};

Envelope sign_envelope(std::string payload_type, std::string payload, const SecretKey &key);

json::Value envelope_json(const Envelope &envelope);

// InputError "<source>: <json path>: <problem>" for anything that is not an
// envelope: missing or mistyped members, base64 that does not decode, no
// signatures. Says nothing about whether a signature verifies.
Envelope parse_envelope(std::string_view text, std::string_view source);

enum class SignatureCheck {
  verified,          // a signature verifies with the key
  no_matching_keyid, // every signature names another key
  does_not_verify,   // a signature is for this key (or names none) but is not valid
};

// DSSE verification with one key: signatures whose keyid names another key
// are passed over (the keyid only picks the key; it proves nothing), the rest
// are checked against PAE(payloadType, payload).
SignatureCheck check_signature(const Envelope &envelope, const PublicKey &key);

} // namespace kibench::attest
