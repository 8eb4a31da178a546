#include "lib/importers/external/invocation_time.hpp"

#include <string>

#include "lib/importers/liger/csv_timestamp.hpp"

namespace kibench::importers::external {

bool is_invocation_time(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS.mmmZ
  // 012345678901234567890123
  if (text.size() != 24 || text[10] != 'T' || text[19] != '.' || text[23] != 'Z') return false;
  for (std::size_t i = 20; i < 23; ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  // The calendar rules are the Liger CSV's: the same date and time of day,
  // there separated by a space.
  std::string date_time(text.substr(0, 19));
  date_time[10] = ' ';
  return liger::CsvTimestamp::parse(date_time).has_value();
}

} // namespace kibench::importers::external
