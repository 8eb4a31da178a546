#include "lib/attest/base64.hpp"

#include <array>

#include <sodium.h>

namespace kibench::attest {

std::string encode_base64(std::span<const unsigned char> bytes) {
  constexpr int variant = sodium_base64_VARIANT_ORIGINAL;
  // sodium_base64_ENCODED_LEN counts the terminating NUL that
  // sodium_bin2base64 writes; the string keeps it only until the resize.
  std::string text(sodium_base64_ENCODED_LEN(bytes.size(), variant), '\0');
  sodium_bin2base64(text.data(), text.size(), bytes.data(), bytes.size(), variant);
  text.resize(text.size() - 1);
  return text;
}

std::string encode_base64(std::string_view bytes) {
  return encode_base64(
      std::span<const unsigned char>(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size()));
}

std::optional<std::size_t> decode_base64_into(std::string_view text, std::span<unsigned char> out) {
  // The alphabets differ only in two characters and padding is either
  // required or forbidden per variant, so at most one variant accepts a
  // given text and the order of trial does not matter.
  static constexpr std::array variants = {
      sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
      sodium_base64_VARIANT_URLSAFE, sodium_base64_VARIANT_URLSAFE_NO_PADDING};
  for (const int variant : variants) {
    std::size_t written = 0;
    // No ignored characters and no end pointer: the whole text must decode.
    if (sodium_base642bin(out.data(), out.size(), text.data(), text.size(), nullptr, &written, nullptr,
                          variant) == 0) {
      return written;
    }
  }
  return std::nullopt;
}

std::optional<std::string> decode_base64(std::string_view text) {
  std::string bytes(text.size() / 4 * 3 + 3, '\0');
  const auto written =
      decode_base64_into(text, std::span(reinterpret_cast<unsigned char *>(bytes.data()), bytes.size()));
  if (!written) return std::nullopt;
  bytes.resize(*written);
  return bytes;
}

} // namespace kibench::attest
