// cpu-reference's per-row fp32 chain (kernels/lm_head/reference/host_reference_chain.hpp), autograd
// op by op, against the oracle's closed-form gradient on the same logits:
// with no bf16 rounding in between they must agree to fp32 precision, so
// the reference's error against the oracle is its roundings, not its math.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/lm_head/reference/host_reference_chain.hpp"

using namespace kibench;

namespace {

constexpr std::int64_t kIgnore = -100;

double rel_l2(const std::vector<double> &out, const std::vector<double> &ref) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    diff += (out[k] - ref[k]) * (out[k] - ref[k]);
    norm += ref[k] * ref[k];
  }
  return std::sqrt(diff / norm);
}

} // namespace

TEST_CASE("the fp32 reference chain agrees with the oracle on exact logits", "[cpu_impl][chain]") {
  const double beta = GENERATE(0.0, 0.3, 0.5, 1.0);
  const double temperature = GENERATE(0.5, 1.0, 2.0);
  const double spread = GENERATE(1.0, 6.0); // logit standard deviation
  const auto [weight_hard, weight_soft] =
      GENERATE(table<double, double>({{0.5, 0.5}, {0.0, 1.0}, {1.0, 0.0}}));
  CAPTURE(beta, temperature, spread, weight_hard, weight_soft);

  constexpr std::int64_t T = 5, V = 300;
  OracleProblem problem;
  problem.tokens = T;
  problem.vocab = V;
  problem.target = {7, kIgnore, 299, 0, 150};
  problem.scalars = {.beta = beta,
                     .temperature = temperature,
                     .weight_hard = weight_hard,
                     .weight_soft = weight_soft,
                     .ignore_index = kIgnore};

  std::mt19937 rng(2024);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(spread));
  std::vector<float> student(T * V), teacher(T * V);
  for (float &z : student) z = normal(rng);
  for (std::size_t k = 0; k < teacher.size(); ++k) teacher[k] = 0.6f * student[k] + 0.8f * normal(rng);
  OracleLogits logits;
  logits.student.assign(student.begin(), student.end());
  logits.teacher.assign(teacher.begin(), teacher.end());

  // The chain, row by row, as cpu-reference runs it (without its roundings).
  constexpr float n = 4.0f; // valid tokens
  reference::RowChain chain(V, problem.scalars);
  std::vector<double> chain_gradient(T * V, 0.0);
  std::vector<float> row_gradient(V);
  double hard_sum = 0.0, soft_sum = 0.0;
  for (std::int64_t i = 0; i < T; ++i) {
    const std::int64_t y = problem.target[static_cast<std::size_t>(i)];
    if (y == kIgnore) continue;
    const std::span<const float> z_s(&student[static_cast<std::size_t>(i * V)], V);
    const std::span<const float> z_t(&teacher[static_cast<std::size_t>(i * V)], V);
    const reference::RowLoss loss = chain.forward(z_s, z_t, y);
    hard_sum += loss.cross_entropy;
    soft_sum += loss.jsd;
    chain.backward(y, static_cast<float>(weight_hard) / n, static_cast<float>(weight_soft) / n, row_gradient);
    for (std::int64_t k = 0; k < V; ++k)
      chain_gradient[static_cast<std::size_t>(i * V + k)] = row_gradient[k];
  }
  const double chain_loss = weight_hard * hard_sum / n + weight_soft * soft_sum / n;

  const double oracle_loss_value = oracle_loss(problem, logits);
  const std::vector<double> oracle_gradient = oracle_logit_gradient(problem, logits);
  REQUIRE(oracle_loss_value > 0.0);
  CHECK(std::abs(chain_loss - oracle_loss_value) <= 1e-5 * oracle_loss_value);
  const double gradient_error = rel_l2(chain_gradient, oracle_gradient);
  INFO("logit gradient rel L2 error " << gradient_error);
  CHECK(gradient_error <= 1e-5);
  for (std::int64_t k = 0; k < V; ++k) CHECK(chain_gradient[static_cast<std::size_t>(V + k)] == 0.0);
}
