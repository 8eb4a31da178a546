#include "lib/io/terminal_text.hpp"

#include <cstdint>

#include <fmt/core.h>

namespace kibench::io {

namespace {

// The code point of the well-formed UTF-8 sequence at text[i] and its
// length, or length 0 when the bytes there are not one.
struct Decoded {
  std::uint32_t code_point = 0;
  std::size_t length = 0;
};

Decoded decode(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t length = 0;
  std::uint32_t code_point = 0;
  unsigned char low = 0x80, high = 0xBF; // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
    code_point = b & 0x1Fu;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    code_point = b & 0x0Fu;
    if (b == 0xE0) low = 0xA0;
    if (b == 0xED) high = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    code_point = b & 0x07u;
    if (b == 0xF0) low = 0x90;
    if (b == 0xF4) high = 0x8F;
  } else {
    return {};
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return {};
  for (std::size_t k = 1; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return {};
    code_point = (code_point << 6) | (byte(i + k) & 0x3Fu);
  }
  return {code_point, length};
}

bool reorders_text(std::uint32_t code_point) {
  return (code_point >= 0x202A && code_point <= 0x202E) || (code_point >= 0x2066 && code_point <= 0x2069);
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c == '\r') {
      out += "\\r";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (c < 0x80) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (const Decoded d = decode(text, i); d.length == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (d.code_point <= 0x9F || reorders_text(d.code_point)) {
      out += fmt::format("\\u{:04x}", d.code_point);
      i += d.length;
    } else {
      out.append(text.substr(i, d.length));
      i += d.length;
    }
  }
  return out;
}

} // namespace kibench::io
