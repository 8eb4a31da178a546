#include "lib/run/run_directory_name.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace kibench {

std::string run_directory_name(std::string_view workload_name, Pass pass, std::string_view timestamp) {
  std::string stamp(timestamp);
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return fmt::format("{}-{}-{}", stamp, workload_name, to_string(pass));
}

} // namespace kibench
