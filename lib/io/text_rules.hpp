// Rules for text that comes from inputs (a manifest, a plugin, a Python
// lane, a flag), checked in one linear pass each: no backtracking regular
// expression ever sees untrusted text (libstdc++'s std::regex recurses once
// per character and overflows the stack on a few ten thousand), and UTF-8
// is checked, repaired or cut on character boundaries before it is written.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kibench::io {

// ^[a-z][a-z0-9_]*$ (KernelIndex identifiers: labels keys, dtypes, ...).
bool is_identifier(std::string_view text);
// ^[a-z0-9][a-z0-9._-]*$ (implementation names).
bool is_lowercase_name(std::string_view text);
// Exactly `length` lowercase hex digits.
bool is_lowercase_hex(std::string_view text, std::size_t length);
// ^sha256:[0-9a-f]{64}$
bool is_sha256_digest(std::string_view text);

// The offset of the first byte that does not belong to well-formed UTF-8
// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or
// npos when the text is valid.
std::size_t first_invalid_utf8(std::string_view text);
inline bool is_utf8(std::string_view text) {
  return first_invalid_utf8(text) == std::string_view::npos;
}
// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD (the Unicode replacement character); valid text is unchanged.
std::string repair_utf8(std::string_view text);
// The longest prefix of `text` of at most `max_bytes` bytes that does not
// end inside a UTF-8 sequence.
std::string_view cut_utf8(std::string_view text, std::size_t max_bytes);

// Text shown in a message about it: at most `max_bytes` bytes of it, cut on
// a character boundary, and "… (N bytes)" when it was longer, so a 2 MB
// name that is refused is not echoed whole.
std::string excerpt(std::string_view text, std::size_t max_bytes = 80);

} // namespace kibench::io
