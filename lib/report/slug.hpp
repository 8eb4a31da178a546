// Identifiers derived from names (workload names, implementation names)
// for element ids and data-testid attributes: stable, so a test or a link
// can name a chart by the workload it shows.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace kibench::report {

// Lowercase ASCII letters, digits, '.', '_' and '-'; every other run of
// bytes becomes one '-'. "" becomes "x" (an id must not be empty).
std::string slug(std::string_view name);

// Hands out slugs unique within one page: the second "a" is "a-2".
class SlugRegistry {
public:
  std::string unique(std::string_view name);

private:
  std::map<std::string, int> uses_;
};

} // namespace kibench::report
