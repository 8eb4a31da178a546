#include "lib/report/palette.hpp"

#include <algorithm>
#include <array>

namespace kibench::report {

std::string_view series_color(std::size_t index) {
  // Okabe–Ito, without its black (kept for axes) and with the yellow last:
  // on white it is the weakest.
  static constexpr std::array<std::string_view, 7> colors{"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                                          "#56b4e9", "#d55e00", "#f0e442"};
  return colors[index % colors.size()];
}

std::string_view ColorAssignment::color_of(std::string_view name) const {
  const auto found = std::find(names_.begin(), names_.end(), name);
  return series_color(static_cast<std::size_t>(found - names_.begin()));
}

} // namespace kibench::report
