// Which samples ran at a reduced clock. Shared by the timing loop and by
// imports of another harness's samples, so both flag by the same rule.
#pragma once

#include "lib/harness/harness.hpp"

namespace kibench {

// Sets every sample's `throttled`: its SM clock is under `fraction` times
// the highest clock any sample of `m` reached. Samples without a clock
// reading are never flagged (there is nothing to judge them by).
void flag_throttled(Measurement &m, double fraction);

} // namespace kibench
