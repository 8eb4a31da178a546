// Base64 as DSSE uses it. Written in the standard alphabet with padding
// (RFC 4648 section 4); read in the standard or URL-safe alphabet, padded or
// not, because the DSSE envelope spec asks readers to accept all four.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kibench::attest {

std::string encode_base64(std::span<const unsigned char> bytes);
std::string encode_base64(std::string_view bytes);

// Decodes straight into `out` (so a secret never passes through a buffer
// nobody wipes) and returns the number of bytes written; nullopt when `text`
// is not base64 in any accepted form (whitespace included) or needs more
// than out.size() bytes.
std::optional<std::size_t> decode_base64_into(std::string_view text, std::span<unsigned char> out);

std::optional<std::string> decode_base64(std::string_view text);

} // namespace kibench::attest
