// The name of a run directory: "<timestamp>-<workload>-<pass>", the
// timestamp with '-' for ':' (2026-12-02T14-17-03.117Z) so the name is
// portable and sorts by time.
#pragma once

#include <string>
#include <string_view>

#include "lib/implementation/implementation.hpp"

namespace kibench {

std::string run_directory_name(std::string_view workload_name, Pass pass, std::string_view timestamp);

} // namespace kibench
