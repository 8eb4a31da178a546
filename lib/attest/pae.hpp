// DSSE's pre-authentication encoding (secure-systems-lab/dsse protocol.md):
// the bytes a signature covers. Binding the payload type into the signed
// bytes means a signature over one kind of document cannot be replayed as
// another kind; the length prefixes make the encoding unambiguous.
#pragma once

#include <string>
#include <string_view>

namespace kibench::attest {

// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, where LEN is the byte
// count in ASCII decimal without leading zeros, SP one space (0x20), and the
// type and body appear byte for byte.
std::string pae(std::string_view payload_type, std::string_view payload);

} // namespace kibench::attest
