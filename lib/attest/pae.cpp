#include "lib/attest/pae.hpp"

#include <fmt/core.h>

namespace kibench::attest {

std::string pae(std::string_view payload_type, std::string_view payload) {
  // fmt writes the strings as raw bytes; nothing here is re-encoded.
  return fmt::format("DSSEv1 {} {} {} {}", payload_type.size(), payload_type, payload.size(), payload);
}

} // namespace kibench::attest
