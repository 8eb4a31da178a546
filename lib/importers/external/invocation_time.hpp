// The invocation id of an external result: the time it was taken, written
// exactly as kibench run writes its own (utc_timestamp_now), so directory
// names and raw samples read alike.
#pragma once

#include <string_view>

namespace kibench::importers::external {

// True for "YYYY-MM-DDTHH:MM:SS.mmmZ" naming a real calendar day and time
// of day (no leap seconds, no other zone, exactly three fraction digits).
bool is_invocation_time(std::string_view text);

} // namespace kibench::importers::external
