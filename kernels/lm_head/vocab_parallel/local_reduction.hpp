// The order in which a local communicator reduces the buffers of the ranks
// one process drives, shared by the host's LocalCommunicator semantics and
// the device's LocalDeviceCommunicator: rank 0's buffer is combined with
// rank 1's, then rank 2's, ... (left to right, ((b0 ∘ b1) ∘ b2) ∘ …, the
// order LocalCommunicator takes per element), then copied into every other
// rank's buffer. A fixed order gives the same bits every run; the device
// runs each step as one whole-buffer kernel or copy, so for the same inputs
// and operation both communicators give the same bits.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#if defined(__CUDACC__)
#define KIBENCH_HOST_DEVICE __host__ __device__
#else
#define KIBENCH_HOST_DEVICE
#endif

namespace kibench::vocab_parallel {

// The element-wise operations, as std::max and + compute them (NaN aside).
struct MaxOf {
  template <class T> KIBENCH_HOST_DEVICE T operator()(T a, T b) const { return a < b ? b : a; }
};
struct SumOf {
  template <class T> KIBENCH_HOST_DEVICE T operator()(T a, T b) const { return a + b; }
};

struct LocalReductionSchedule {
  std::vector<int> combine_from; // buffer 0 = op(buffer 0, buffer r), r in this order
  std::vector<int> copy_to;      // then buffer r = buffer 0, r in this order
};

// Throws std::invalid_argument unless ranks >= 1.
[[nodiscard]] LocalReductionSchedule local_reduction_schedule(int ranks);

// The schedule run on host buffers: what LocalDeviceCommunicator does on
// the device, for tests that run without one.
template <class T, class Op>
void reduce_on_host(const LocalReductionSchedule &schedule, const std::vector<std::span<T>> &local, Op op) {
  if (local.size() != schedule.combine_from.size() + 1)
    throw std::invalid_argument("reduce_on_host: one buffer per rank expected");
  const std::size_t n = local.front().size();
  for (const int r : schedule.combine_from)
    for (std::size_t i = 0; i < n; ++i) local.front()[i] = op(local.front()[i], local[r][i]);
  for (const int r : schedule.copy_to)
    for (std::size_t i = 0; i < n; ++i) local[r][i] = local.front()[i];
}

} // namespace kibench::vocab_parallel
