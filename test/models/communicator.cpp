#include "test/models/communicator.hpp"

#include <algorithm>
#include <stdexcept>

namespace kibench::vocab_parallel {

namespace {

template <typename Combine>
void all_reduce(const std::vector<std::span<double>> &local, int ranks, Combine combine) {
  if (static_cast<int>(local.size()) != ranks)
    throw std::invalid_argument("LocalCommunicator: one buffer per rank expected");
  if (local.empty()) return;
  const std::size_t n = local.front().size();
  for (const auto &buffer : local)
    if (buffer.size() != n) throw std::invalid_argument("LocalCommunicator: buffers of different sizes");
  for (std::size_t i = 0; i < n; ++i) {
    double value = local.front()[i];
    for (std::size_t r = 1; r < local.size(); ++r) value = combine(value, local[r][i]);
    for (const auto &buffer : local) buffer[i] = value;
  }
}

} // namespace

void LocalCommunicator::all_reduce_max(const std::vector<std::span<double>> &local) {
  all_reduce(local, ranks_, [](double a, double b) { return std::max(a, b); });
}

void LocalCommunicator::all_reduce_sum(const std::vector<std::span<double>> &local) {
  all_reduce(local, ranks_, [](double a, double b) { return a + b; });
}

} // namespace kibench::vocab_parallel
