#include "lib/attest/sodium_runtime.hpp"

#include <stdexcept>

#include <sodium.h>

namespace kibench::attest {

void require_sodium() {
  // sodium_init() is safe to call again; the static runs it exactly once.
  static const int status = sodium_init();
  if (status < 0) throw std::runtime_error("libsodium failed to initialize");
}

} // namespace kibench::attest
