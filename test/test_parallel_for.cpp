// parallel_for: ranges cover the index space exactly once, tiny loops stay
// on the caller's thread, and an exception in any range reaches the caller.
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "lib/parallel/worker_pool.hpp"

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "lib/parallel/parallel_for.hpp"

using namespace kibench;

TEST_CASE("parallel_for covers the range begin..end once for any worker count", "[parallel]") {
  const unsigned workers = GENERATE(1u, 2u, 3u, 8u);
  const std::int64_t begin = GENERATE(0, 5);
  const std::int64_t end = begin + GENERATE(0, 1, 7, 1000);
  std::vector<std::atomic<int>> hits(static_cast<std::size_t>(end + 1));
  std::atomic<int> ranges = 0;
  parallel_for(
      begin, end,
      [&](std::int64_t lo, std::int64_t hi) {
        REQUIRE(lo < hi);
        ++ranges;
        for (std::int64_t i = lo; i < hi; ++i) ++hits[static_cast<std::size_t>(i)];
      },
      1, workers);
  for (std::int64_t i = 0; i <= end; ++i)
    CHECK(hits[static_cast<std::size_t>(i)].load() == (i >= begin && i < end ? 1 : 0));
  CHECK(ranges <= static_cast<int>(workers));
}

TEST_CASE("parallel_for keeps loops under min_chunk on the calling thread", "[parallel]") {
  const auto caller = std::this_thread::get_id();
  bool same_thread = false;
  int calls = 0;
  parallel_for(
      0, 100,
      [&](std::int64_t, std::int64_t) {
        ++calls;
        same_thread = std::this_thread::get_id() == caller;
      },
      1000, 4);
  CHECK(calls == 1);
  CHECK(same_thread);
}

TEST_CASE("parallel_for rethrows an exception from a worker", "[parallel]") {
  auto body = [](std::int64_t lo, std::int64_t) {
    if (lo > 0) throw std::runtime_error("range failed");
  };
  CHECK_THROWS_WITH(parallel_for(0, 100, body, 1, 4), "range failed");
}

TEST_CASE("parallel_for keeps its threads from call to call, and nested or concurrent loops still finish",
          "[parallel]") {
  // The same pool threads serve every call: no more distinct thread ids
  // than the pool has, plus the caller, over many calls.
  std::mutex ids_mutex;
  std::set<std::thread::id> ids;
  for (int call = 0; call < 200; ++call)
    parallel_for(0, 64, [&](std::int64_t, std::int64_t) {
      const std::lock_guard lock(ids_mutex);
      ids.insert(std::this_thread::get_id());
    }, 1, 4);
  CHECK(ids.size() <= WorkerPool::shared().threads() + 1);

  // A loop inside a loop, and loops from two threads at once: each sums
  // its own range exactly once.
  std::atomic<std::int64_t> nested{0};
  parallel_for(0, 8, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i)
      parallel_for(0, 100, [&](std::int64_t a, std::int64_t b) { nested += b - a; }, 1, 3);
  }, 1, 4);
  CHECK(nested == 800);
  std::atomic<std::int64_t> left{0}, right{0};
  std::thread other([&] {
    for (int k = 0; k < 50; ++k) parallel_for(0, 1000, [&](std::int64_t a, std::int64_t b) { left += b - a; }, 1, 4);
  });
  for (int k = 0; k < 50; ++k) parallel_for(0, 1000, [&](std::int64_t a, std::int64_t b) { right += b - a; }, 1, 4);
  other.join();
  CHECK(left == 50000);
  CHECK(right == 50000);
}

TEST_CASE("a worker pool of no threads runs every task on the caller", "[parallel]") {
  WorkerPool none(0);
  std::vector<int> seen(5, 0);
  const std::function<void(std::int64_t)> task = [&](std::int64_t k) { ++seen[static_cast<std::size_t>(k)]; };
  REQUIRE(none.try_run(5, task));
  CHECK(seen == std::vector<int>{1, 1, 1, 1, 1});
  WorkerPool three(3);
  std::vector<std::atomic<int>> hits(40);
  const std::function<void(std::int64_t)> count = [&](std::int64_t k) { ++hits[static_cast<std::size_t>(k)]; };
  for (int call = 0; call < 100; ++call) REQUIRE(three.try_run(40, count));
  for (const auto &h : hits) CHECK(h == 100);
}
