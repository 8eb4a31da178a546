// Text from inputs (a CSV field, a manifest's name, a file name) made safe
// to print on a terminal or in a log: control characters are shown as
// escapes instead of acting (an ANSI sequence recolouring the screen, a
// carriage return overwriting a line, a newline forging one), and bytes
// that are not UTF-8 as \xNN. Printable UTF-8 passes unchanged.
#pragma once

#include <string>
#include <string_view>

namespace kibench::io {

// \n \r \t for those three; \xNN for the other C0 controls, DEL and bytes
// that are not UTF-8; \uNNNN for the C1 controls (U+0080-U+009F, which some
// terminals obey as ESC sequences) and the bidirectional overrides and
// isolates (U+202A-U+202E, U+2066-U+2069, which reorder what is shown).
std::string printable(std::string_view text);

} // namespace kibench::io
