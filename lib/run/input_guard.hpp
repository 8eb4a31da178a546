// The shared inputs as generated, and what a lane changed of them. Every
// copy of every input tensor (host and device) is fingerprinted
// (lib/inputs/fingerprint.hpp) once kibench has made it; a copy made later
// (the host copy, when a host lane first asks for it) is held to the
// fingerprint of a fresh generation. A changed copy is generated again in
// place, so that the lanes after the one that wrote into it see the inputs
// they would have seen.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "lib/inputs/input_set.hpp"
#include "lib/run/backend.hpp"

namespace kibench {

class InputGuard {
public:
  // Takes the fingerprints of the copies that exist now.
  InputGuard(const Backend &backend, InputSet &inputs);

  // nullopt when every copy is as generated; else which copies changed
  // ("teacher_weight (host copy)"), after restoring them. Throws
  // std::runtime_error if they cannot be restored.
  std::optional<std::string> check_and_restore();
  // Takes the fingerprints again, after kibench itself generated the
  // copies anew (another input set, InputSet::set_variant).
  void expect_current();

private:
  const Backend &backend_;
  InputSet &inputs_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> expected_; // (tensor, copy) -> fingerprint
};

} // namespace kibench
