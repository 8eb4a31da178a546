// The host side of the vocabulary-parallel emulation (no GPU needed): the
// local reduction schedule the device communicator runs gives the CPU
// LocalCommunicator's bits, the emulation's plan of shards and chunks, and
// the registry's entries.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "kernels/registry.hpp"
#include "test/models/communicator.hpp"
#include "kernels/lm_head/vocab_parallel/emulated_implementation.hpp"
#include "kernels/lm_head/vocab_parallel/emulation_plan.hpp"
#include "kernels/lm_head/vocab_parallel/local_reduction.hpp"
#include "kernels/lm_head/vocab_parallel/vocab_shards.hpp"

using namespace kibench;
using namespace kibench::vocab_parallel;

namespace {

std::vector<std::span<double>> spans_of(std::vector<std::vector<double>> &buffers) {
  return std::vector<std::span<double>>(buffers.begin(), buffers.end());
}

} // namespace

TEST_CASE("local_reduction_schedule: rank 0 combines the others in rank order, then copies back",
          "[vocab_parallel]") {
  const LocalReductionSchedule one = local_reduction_schedule(1);
  CHECK(one.combine_from.empty());
  CHECK(one.copy_to.empty());
  const LocalReductionSchedule four = local_reduction_schedule(4);
  CHECK(four.combine_from == std::vector<int>{1, 2, 3});
  CHECK(four.copy_to == std::vector<int>{1, 2, 3});
  CHECK_THROWS_AS(local_reduction_schedule(0), std::invalid_argument);
}

TEST_CASE("the device communicator's schedule gives LocalCommunicator's bits", "[vocab_parallel]") {
  std::mt19937_64 rng(11);
  // Magnitudes far apart: a sum in another order (a tree, right to left)
  // rounds differently, so equal bits mean the same order.
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-40, 40);
  for (const int ranks : {1, 2, 3, 8}) {
    INFO(ranks << " ranks");
    std::vector<std::vector<double>> buffers(static_cast<std::size_t>(ranks));
    for (auto &buffer : buffers)
      for (int i = 0; i < 500; ++i) buffer.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    for (const bool sum : {false, true}) {
      auto cpu = buffers, scheduled = buffers;
      LocalCommunicator communicator(ranks);
      const LocalReductionSchedule schedule = local_reduction_schedule(ranks);
      if (sum) {
        communicator.all_reduce_sum(spans_of(cpu));
        reduce_on_host(schedule, spans_of(scheduled), SumOf{});
      } else {
        communicator.all_reduce_max(spans_of(cpu));
        reduce_on_host(schedule, spans_of(scheduled), MaxOf{});
      }
      CHECK(scheduled == cpu);
      for (const auto &buffer : scheduled) CHECK(buffer == scheduled.front());
    }
  }
  // The test can fail: right to left gives other bits on these values.
  std::vector<std::vector<double>> buffers{{1.0}, {std::ldexp(1.0, 53)}, {-std::ldexp(1.0, 53)}};
  auto reversed = buffers;
  LocalCommunicator(3).all_reduce_sum(spans_of(buffers));
  const double right_to_left = (reversed[2][0] + reversed[1][0]) + reversed[0][0];
  CHECK(buffers[0][0] != right_to_left);
}

TEST_CASE("plan_emulation: the shards of vocab_shards, 16-byte logit rows, chunks that cover T",
          "[vocab_parallel]") {
  for (const std::int64_t vocab : {13, 517, 1003, 50257}) {
    for (const int ranks : {1, 2, 3, 8}) {
      INFO("V = " << vocab << ", " << ranks << " shards");
      const EmulationPlan plan = plan_emulation(40, vocab, 33, ranks, 9, 0);
      const auto shards = vocab_shards(vocab, ranks);
      REQUIRE(plan.shards.size() == shards.size());
      for (std::size_t r = 0; r < shards.size(); ++r) {
        CHECK(plan.shards[r].shard.begin == shards[r].begin);
        CHECK(plan.shards[r].shard.end == shards[r].end);
        CHECK(plan.shards[r].ld % 8 == 0);
        CHECK(plan.shards[r].ld >= shards[r].size());
        CHECK(plan.shards[r].ld < shards[r].size() + 8);
      }
      CHECK(plan.rows == 9);
      CHECK(plan.chunks == 5); // 4 · 9 + 4
    }
  }
  // More rows than tokens: one chunk of T.
  CHECK(plan_emulation(4, 1000, 32, 2, 9, 0).rows == 4);
  CHECK(plan_emulation(4, 1000, 32, 2, 9, 0).chunks == 1);
}

TEST_CASE("plan_emulation: without fixed rows, the fewest chunks whose buffers fit the budget, evened out",
          "[vocab_parallel]") {
  const std::int64_t T = 8192, V = 128256, Hs = 2048;
  for (const int ranks : {1, 2, 8}) {
    INFO(ranks << " shards");
    const std::uint64_t budget = std::uint64_t{2} << 30;
    const EmulationPlan plan = plan_emulation(T, V, Hs, ranks, 0, budget);
    const std::uint64_t per_row = bytes_per_chunk_row(plan.shards, Hs);
    // Both logit rows of every shard at least, and the grad x partials.
    CHECK(per_row >= 4 * static_cast<std::uint64_t>(V) + 4 * static_cast<std::uint64_t>(ranks * Hs));
    CHECK(plan.rows * per_row <= budget);
    const auto most = static_cast<std::int64_t>(budget / per_row);
    CHECK(plan.chunks == (T + most - 1) / most);
    CHECK(plan.chunks == (T + plan.rows - 1) / plan.rows);
    // Even: the last chunk is short of the others by less than one row a chunk.
    CHECK(plan.rows - (T - (plan.chunks - 1) * plan.rows) < plan.chunks);
  }
  // Two shards of the seed: 8113 rows fit, so two chunks of 4096, not 8113 + 79.
  const EmulationPlan two = plan_emulation(T, V, Hs, 2, 0, (std::uint64_t{2} << 30) * 2);
  CHECK(two.chunks == 2);
  CHECK(two.rows == 4096);
  // 10 rows, 3 fitting: the fewest chunks is 4, of ceil(10 / 4) = 3 rows at most.
  const std::uint64_t per_row_small = bytes_per_chunk_row(plan_emulation(10, 1000, 32, 3, 1, 0).shards, 32);
  const EmulationPlan small = plan_emulation(10, 1000, 32, 3, 0, 3 * per_row_small);
  CHECK(small.chunks == 4);
  CHECK(small.rows == 3);
  // A budget below one row still runs one row at a time; one above T rows, one chunk.
  CHECK(plan_emulation(10, 1000, 32, 3, 0, 1).rows == 1);
  CHECK(plan_emulation(10, 1000, 32, 3, 0, 1).chunks == 10);
  CHECK(plan_emulation(10, 1000, 32, 3, 0, std::uint64_t{1} << 40).rows == 10);
  CHECK(accumulator_bytes(1000, 32, false) == 4 * 1000 * 32);
  CHECK(accumulator_bytes(1000, 32, true) == 4 * 1000 * 32 + 4 * 1000);
}

TEST_CASE("plan_emulation rejects what cannot be sharded or chunked", "[vocab_parallel]") {
  CHECK_THROWS_AS(plan_emulation(10, 5, 32, 8, 0, 1 << 20), std::invalid_argument);
  CHECK_THROWS_AS(plan_emulation(0, 1000, 32, 2, 0, 1 << 20), std::invalid_argument);
  CHECK_THROWS_AS(plan_emulation(10, 1000, 32, 2, -1, 1 << 20), std::invalid_argument);
  CHECK_THROWS_AS(plan_emulation(10, 1000, 32, 0, 0, 1 << 20), std::invalid_argument);
}

TEST_CASE("the registry has the emulation for 2, 4 and 8 shards", "[vocab_parallel]") {
  for (const int shards : {2, 4, 8}) {
    const std::string name = vocab_parallel_emulation_name(shards);
    INFO(name);
    const RegisteredImplementation *r = find_implementation(name);
    REQUIRE(r != nullptr);
    CHECK(r->needs_gpu);
    CHECK_FALSE(r->is_oracle);
    const auto impl = r->make();
    CHECK(impl->name() == name);
    const RevisionFacts facts = impl->revision();
    CHECK(facts.title.find(std::to_string(shards) + " shards") != std::string::npos);
    CHECK(facts.description.find("Shards run serially") != std::string::npos);
  }
  CHECK(vocab_parallel_emulation_name(3) == "fused-vp3-emulated");
  CHECK_THROWS_AS(make_vocab_parallel_emulated({.shards = 0}), std::invalid_argument);
}
