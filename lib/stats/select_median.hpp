// The median by selection (O(n)) rather than by sorting, for the inner loop
// of the bootstrap. Same definition as stats::median: linear interpolation
// between closest ranks, i.e. the mean of the two middle values for even n.
#pragma once

#include <span>

namespace kibench::stats {

// Reorders `values`. Throws std::invalid_argument when empty.
double median_in_place(std::span<double> values);

} // namespace kibench::stats
