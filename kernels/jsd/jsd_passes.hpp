// The passes a jsd implementation times. jsd computes its gradient with its
// loss, in one pass, as Liger's kernel does: a full pass is the loss and dX,
// a forward pass the loss alone, and there is no backward-only pass.
#pragma once

#include <optional>
#include <string>

#include "lib/implementation/implementation.hpp"

namespace kibench {

// Why `pass` cannot be timed for jsd, or nothing where it can.
inline std::optional<std::string> jsd_pass_refusal(Pass pass) {
  if (pass == Pass::backward)
    return "jsd computes its gradient with its loss, in one pass (as Liger's kernel does): time --pass full";
  return std::nullopt;
}

} // namespace kibench
