#include "lib/harness/interleave_order.hpp"

#include <algorithm>

namespace kibench {

std::size_t interleave_cycle(std::size_t n) {
  if (n <= 1) return 1;
  return n % 2 == 0 ? n : 2 * n;
}

std::vector<std::size_t> interleave_order(std::size_t n, std::size_t round) {
  std::vector<std::size_t> order(n);
  if (n == 0) return order;
  // Williams' first row 0, 1, n-1, 2, n-2, ...: its successive differences
  // 1, -2, 3, -4, ... are distinct mod n for even n, so adding the row
  // index r mod n to every entry gives n rows in which each ordered pair of
  // neighbours occurs once. For odd n the differences repeat in pairs, and
  // the n mirrored rows supply the missing ordered pairs.
  for (std::size_t i = 0; i < n; ++i) order[i] = i % 2 == 1 ? (i + 1) / 2 : (n - i / 2) % n;
  const std::size_t row = round % interleave_cycle(n);
  for (auto &k : order) k = (k + row) % n;
  if (row >= n) std::reverse(order.begin(), order.end());
  return order;
}

} // namespace kibench
