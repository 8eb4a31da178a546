// RFC 4180 output: records end in CRLF; a field holding a comma, a double
// quote, CR or LF is enclosed in double quotes with each quote doubled.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kibench::exports {

std::string csv_field(std::string_view value);

// One record, CRLF-terminated.
std::string csv_record(const std::vector<std::string> &fields);

} // namespace kibench::exports
