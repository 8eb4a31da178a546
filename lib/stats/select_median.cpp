#include "lib/stats/select_median.hpp"

#include <algorithm>
#include <stdexcept>

namespace kibench::stats {

double median_in_place(std::span<double> values) {
  if (values.empty()) throw std::invalid_argument("median of no samples");
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  // Even n: after nth_element everything before `middle` is <= upper, so
  // the lower middle value is the largest of them.
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return lower + (upper - lower) / 2.0;
}

} // namespace kibench::stats
