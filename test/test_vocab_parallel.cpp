// The vocabulary-parallel loss (kernels/lm_head/vocab_parallel/): the shards, the
// local communicator, and the sharded algorithm against the fp64 oracle for
// 1, 2, 3 and 8 ranks (V divisible by none of 3 and 8 in most cases) on
// every small workload and on the GPU tests' shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "test/models/communicator.hpp"
#include "test/models/sharded_loss.hpp"
#include "kernels/lm_head/vocab_parallel/vocab_shards.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"
#include "test/source_tree.hpp"

using namespace kibench;
using namespace kibench::vocab_parallel;

namespace {

double relative_l2(const std::vector<double> &out, const std::vector<double> &ref) {
  REQUIRE(out.size() == ref.size());
  double diff = 0.0, norm = 0.0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    diff += (out[k] - ref[k]) * (out[k] - ref[k]);
    norm += ref[k] * ref[k];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

void check_against_oracle(const Workload &w) {
  InputSet inputs(w);
  const OracleProblem problem = oracle_problem(w, inputs.host());
  const OracleResult truth = run_oracle(problem);
  for (const int ranks : {1, 2, 3, 8}) {
    INFO(w.name << ", " << ranks << " ranks, V = " << w.vocab);
    LocalCommunicator communicator(ranks);
    const OracleResult sharded = sharded_oracle(problem, communicator);
    CHECK(std::abs(sharded.loss - truth.loss) <= 1e-12 * std::max(1.0, std::abs(truth.loss)));
    CHECK(relative_l2(sharded.gradients.student_input, truth.gradients.student_input) <= 1e-12);
    CHECK(relative_l2(sharded.gradients.student_weight, truth.gradients.student_weight) <= 1e-12);
    CHECK(relative_l2(sharded.gradients.student_bias, truth.gradients.student_bias) <= 1e-12);
    const OracleResult forward = sharded_oracle(problem, communicator, /*with_gradients=*/false);
    CHECK(forward.loss == sharded.loss);
    CHECK(forward.gradients.student_input.empty());
  }
}

} // namespace

TEST_CASE("vocab_shards: contiguous, in rank order, sizes within one, any V", "[vocab_parallel]") {
  for (const std::int64_t vocab : {1, 7, 8, 1003, 50257}) {
    for (const int ranks : {1, 2, 3, 8}) {
      if (ranks > vocab) {
        CHECK_THROWS_AS(vocab_shards(vocab, ranks), std::invalid_argument);
        continue;
      }
      const auto shards = vocab_shards(vocab, ranks);
      REQUIRE(shards.size() == static_cast<std::size_t>(ranks));
      std::int64_t next = 0, smallest = vocab, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        CHECK(shards[r].rank == r);
        CHECK(shards[r].begin == next);
        next = shards[r].end;
        smallest = std::min(smallest, shards[r].size());
        largest = std::max(largest, shards[r].size());
      }
      CHECK(next == vocab);
      CHECK(largest - smallest <= 1);
      CHECK(smallest >= 1);
    }
  }
  CHECK_THROWS_AS(vocab_shards(10, 0), std::invalid_argument);
}

TEST_CASE("LocalCommunicator reduces every rank's buffer in rank order", "[vocab_parallel]") {
  LocalCommunicator communicator(3);
  std::vector<double> a{1, 5, -2}, b{4, 0, -1}, c{2, 2, -3};
  communicator.all_reduce_max({a, b, c});
  CHECK(a == std::vector<double>{4, 5, -1});
  CHECK(b == a);
  CHECK(c == a);
  std::vector<double> x{1, 2}, y{10, 20}, z{100, 200};
  communicator.all_reduce_sum({x, y, z});
  CHECK(x == std::vector<double>{111, 222});
  CHECK(z == x);
  std::vector<double> short_one{1};
  CHECK_THROWS_AS(communicator.all_reduce_sum({x, y}), std::invalid_argument);
  CHECK_THROWS_AS(communicator.all_reduce_sum({x, y, short_one}), std::invalid_argument);
}

TEST_CASE("the sharded loss matches the oracle on every small workload", "[vocab_parallel]") {
  const std::filesystem::path dir = kibench::test::source_dir() / "workloads" / "small";
  int checked = 0;
  for (const auto &file : list_workload_files(dir)) {
    check_against_oracle(load_workload(file));
    ++checked;
  }
  CHECK(checked >= 9); // odd vocabulary, T = 1, all ignored, beta 0 and 1, tau 2, bias, ...
}

TEST_CASE("the sharded loss matches the oracle on the GPU tests' shapes", "[vocab_parallel]") {
  const std::vector<test::GpuCase> cases{
      {.name = "mixture-bias-ignored",
       .tokens = 24,
       .vocab = 1003,
       .hidden = 64,
       .ignore_fraction = 0.25,
       .bias = true,
       .seed = 3},
      {.name = "beta0-tau-half",
       .tokens = 16,
       .vocab = 2048,
       .hidden = 48,
       .beta = 0.0,
       .temperature = 0.5,
       .seed = 4},
      {.name = "beta1-tau2",
       .tokens = 16,
       .vocab = 517,
       .hidden = 66,
       .beta = 1.0,
       .temperature = 2.0,
       .seed = 5},
  };
  for (const auto &c : cases) check_against_oracle(test::make_gpu_workload(c));
}
