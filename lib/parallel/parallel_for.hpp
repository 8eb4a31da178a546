// Splits an index range over the machine's cores: the ranges run on the
// process's WorkerPool (threads kept from call to call), or on threads of
// their own where the pool is busy (a nested or concurrent loop). Work is
// cut into contiguous ranges; callers that reduce must make each output
// element depend on a fixed-order loop inside one range (never on how the
// range was cut), so results do not change with the number of threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "lib/parallel/worker_pool.hpp"

namespace kibench {

// Hardware threads, at least one.
[[nodiscard]] inline unsigned worker_count() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls body(begin_i, end_i) on disjoint ranges covering [begin, end), one
// per worker, each range at least `min_chunk` long (so tiny loops stay on
// the calling thread). The first exception thrown by any range is rethrown.
template <class Body>
void parallel_for(std::int64_t begin, std::int64_t end, Body &&body, std::int64_t min_chunk = 1,
                  unsigned workers = worker_count()) {
  const std::int64_t length = end - begin;
  if (length <= 0) return;
  const std::int64_t by_size = std::max<std::int64_t>(1, length / std::max<std::int64_t>(1, min_chunk));
  const auto ranges = static_cast<std::int64_t>(std::min<std::int64_t>(workers, by_size));
  if (ranges <= 1) {
    body(begin, end);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run_range = [&](std::int64_t r) {
    const std::int64_t lo = begin + length * r / ranges;
    const std::int64_t hi = begin + length * (r + 1) / ranges;
    try {
      body(lo, hi);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  const std::function<void(std::int64_t)> task = run_range;
  if (!WorkerPool::shared().try_run(ranges, task)) {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(ranges - 1));
    for (std::int64_t r = 1; r < ranges; ++r) threads.emplace_back(run_range, r);
    run_range(0);
  } // jthreads join here
  if (failure) std::rethrow_exception(failure);
}

} // namespace kibench
