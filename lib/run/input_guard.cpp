#include "lib/run/input_guard.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace kibench {

InputGuard::InputGuard(const Backend &backend, InputSet &inputs) : backend_(backend), inputs_(inputs) {
  expect_current();
}

void InputGuard::expect_current() {
  expected_.clear();
  for (const InputFingerprint &f : backend_.input_fingerprints(inputs_)) expected_[{f.tensor, f.copy}] = f.value;
}

std::optional<std::string> InputGuard::check_and_restore() {
  std::string changed;
  bool generated_known = false;
  for (const InputFingerprint &f : backend_.input_fingerprints(inputs_)) {
    auto it = expected_.find({f.tensor, f.copy});
    if (it == expected_.end()) {
      // A copy made since: hold it to a fresh generation's fingerprint.
      if (generated_known || f.copy != "host")
        throw std::logic_error(fmt::format("input guard: an unexpected copy of {} ({})", f.tensor, f.copy));
      for (const InputFingerprint &g : inputs_.generated_host_fingerprints())
        expected_[{g.tensor, g.copy}] = g.value;
      generated_known = true;
      it = expected_.find({f.tensor, f.copy});
    }
    if (it->second != f.value)
      changed += fmt::format("{}{} ({} copy)", changed.empty() ? "" : ", ", f.tensor, f.copy);
  }
  if (changed.empty()) return std::nullopt;
  backend_.restore_inputs(inputs_);
  for (const InputFingerprint &f : backend_.input_fingerprints(inputs_))
    if (expected_.at({f.tensor, f.copy}) != f.value)
      throw std::runtime_error(
          fmt::format("the shared input {} could not be restored after a lane wrote into it", f.tensor));
  return changed;
}

} // namespace kibench
