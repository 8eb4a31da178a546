#include "lib/attest/dsse_envelope.hpp"

#include <fmt/core.h>

#include "lib/attest/base64.hpp"
#include "lib/attest/pae.hpp"
#include "lib/error.hpp"
#include "lib/json/parse.hpp"

namespace kibench::attest {
namespace {

const std::string &required_string(const json::Value &object, std::string_view key, const std::string &path,
                                   std::string_view source) {
  const json::Value *member = object.find(key);
  if (member == nullptr) throw InputError(fmt::format("{}: {}: no \"{}\"", source, path, key));
  if (!member->is_string()) {
    throw InputError(
        fmt::format("{}: {}.{}: expected a string, found {}", source, path, key, member->type_name()));
  }
  return member->as_string();
}

std::string decoded(const std::string &text, const std::string &path, std::string_view source) {
  auto bytes = decode_base64(text);
  if (!bytes) throw InputError(fmt::format("{}: {}: not base64", source, path));
  return std::move(*bytes);
}

} // namespace

Envelope sign_envelope(std::string payload_type, std::string payload, const SecretKey &key) {
  const Ed25519Signature signature = key.sign(pae(payload_type, payload));
  Envelope envelope;
  envelope.payload_type = std::move(payload_type);
  envelope.payload = std::move(payload);
  envelope.signatures.push_back(
      {key.public_key().keyid(),
       std::string(reinterpret_cast<const char *>(signature.data()), signature.size())});
  return envelope;
}

json::Value envelope_json(const Envelope &envelope) {
  json::Array signatures;
  for (const auto &signature : envelope.signatures) {
    signatures.push_back(
        json::Object{{"keyid", signature.keyid}, {"sig", encode_base64(signature.signature)}});
  }
  return json::Object{
      {"payload", encode_base64(envelope.payload)},
      {"payloadType", envelope.payload_type},
      {"signatures", std::move(signatures)},
  };
}

Envelope parse_envelope(std::string_view text, std::string_view source) {
  const json::Value document = json::parse(text, source);
  if (!document.is_object()) {
    throw InputError(
        fmt::format("{}: $: expected a DSSE envelope object, found {}", source, document.type_name()));
  }
  Envelope envelope;
  envelope.payload_type = required_string(document, "payloadType", "$", source);
  envelope.payload = decoded(required_string(document, "payload", "$", source), "$.payload", source);
  const json::Value *signatures = document.find("signatures");
  if (signatures == nullptr || !signatures->is_array() || signatures->as_array().empty()) {
    throw InputError(fmt::format("{}: $.signatures: expected a non-empty array", source));
  }
  for (std::size_t i = 0; i < signatures->as_array().size(); ++i) {
    const json::Value &item = signatures->as_array()[i];
    const std::string path = fmt::format("$.signatures[{}]", i);
    if (!item.is_object()) throw InputError(fmt::format("{}: {}: expected an object", source, path));
    EnvelopeSignature signature;
    // keyid is optional in DSSE.
    if (const json::Value *keyid = item.find("keyid")) {
      if (!keyid->is_string()) throw InputError(fmt::format("{}: {}.keyid: expected a string", source, path));
      signature.keyid = keyid->as_string();
    }
    signature.signature = decoded(required_string(item, "sig", path, source), path + ".sig", source);
    envelope.signatures.push_back(std::move(signature));
  }
  return envelope;
}

SignatureCheck check_signature(const Envelope &envelope, const PublicKey &key) {
  const std::string signed_bytes = pae(envelope.payload_type, envelope.payload);
  const std::string keyid = key.keyid();
  SignatureCheck outcome = SignatureCheck::no_matching_keyid;
  for (const auto &signature : envelope.signatures) {
    if (!signature.keyid.empty() && signature.keyid != keyid) continue;
    const auto *bytes = reinterpret_cast<const unsigned char *>(signature.signature.data());
    if (key.verifies(signed_bytes, std::span(bytes, signature.signature.size())))
      return SignatureCheck::verified;
    outcome = SignatureCheck::does_not_verify;
  }
  return outcome;
}

} // namespace kibench::attest
