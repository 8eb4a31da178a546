// Text from manifests goes into HTML and SVG only through here: a
// workload's title or an environment's name is data, never markup.
#pragma once

#include <string>
#include <string_view>

namespace kibench::report {

// &, <, >, " and ' as character references: safe in element content and
// in double- or single-quoted attribute values alike.
std::string escape_html(std::string_view text);

} // namespace kibench::report
