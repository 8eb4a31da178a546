#include "lib/io/text_rules.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace kibench::io {

namespace {

bool lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
bool hex(char c) {
  return digit(c) || (c >= 'a' && c <= 'f');
}

// The length of the well-formed UTF-8 sequence at `i`, or 0 when the byte
// there does not start one.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF; // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    if (b == 0xE0) low = 0xA0;  // overlong
    if (b == 0xED) high = 0x9F; // surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    if (b == 0xF0) low = 0x90;  // overlong
    if (b == 0xF4) high = 0x8F; // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

} // namespace

bool is_identifier(std::string_view text) {
  return !text.empty() && lower(text.front()) &&
         std::all_of(text.begin(), text.end(), [](char c) { return lower(c) || digit(c) || c == '_'; });
}

bool is_lowercase_name(std::string_view text) {
  return !text.empty() && (lower(text.front()) || digit(text.front())) &&
         std::all_of(text.begin(), text.end(),
                     [](char c) { return lower(c) || digit(c) || c == '.' || c == '_' || c == '-'; });
}

bool is_lowercase_hex(std::string_view text, std::size_t length) {
  return text.size() == length && std::all_of(text.begin(), text.end(), hex);
}

bool is_sha256_digest(std::string_view text) {
  constexpr std::string_view prefix = "sha256:";
  return text.starts_with(prefix) && is_lowercase_hex(text.substr(prefix.size()), 64);
}

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string repair_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD"; // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string_view cut_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back off over continuation bytes to the start of the cut character.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return fmt::format("{}… ({} bytes)", cut_utf8(text, max_bytes), text.size());
}

} // namespace kibench::io
