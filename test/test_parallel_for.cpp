// parallel_for: ranges cover the index space exactly once, tiny loops stay
// on the caller's thread, and an exception in any range reaches the caller.
#include <catch2/catch.hpp>

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
