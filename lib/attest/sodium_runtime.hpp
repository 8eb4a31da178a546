// libsodium must be initialized before its key generation and signing run;
// every attest entry point that reaches them calls this first.
#pragma once

namespace kibench::attest {

// Initializes libsodium once per process; throws std::runtime_error when it
// cannot (no usable random source).
void require_sodium();

} // namespace kibench::attest
