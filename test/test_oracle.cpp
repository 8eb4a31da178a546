// The fp64 oracle: its gradients against central finite differences of its
// own forward, its forward against a closed form, and the properties the
// loss must have (masking, beta limits, softmax shift invariance).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/lm_head/oracle/cpu_oracle.hpp"

using namespace kibench;

namespace {

constexpr std::int64_t kIgnore = -100;

// T=3, V=7, H=4, Hs=2 with both biases; token 1 is ignored.
OracleProblem tiny_problem(double beta, double temperature, std::uint64_t seed = 42) {
  OracleProblem p;
  p.tokens = 3;
  p.vocab = 7;
  p.hidden = 4;
  p.student_hidden = 2;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  auto fill = [&](std::size_t n, double scale) {
    std::vector<double> v(n);
    for (double &x : v) x = scale * unit(rng);
    return v;
  };
  p.student_input = fill(3 * 2, 1.0);
  p.student_weight = fill(7 * 2, 1.5);
  p.teacher_input = fill(3 * 4, 1.0);
  p.teacher_weight = fill(7 * 4, 1.0);
  p.student_bias = fill(7, 0.5);
  p.teacher_bias = fill(7, 0.5);
  p.target = {4, kIgnore, 0};
  p.scalars.beta = beta;
  p.scalars.temperature = temperature;
  p.scalars.weight_hard = 0.4;
  p.scalars.weight_soft = 0.6;
  p.scalars.ignore_index = kIgnore;
  return p;
}

double loss_of(const OracleProblem &p) {
  return run_oracle(p, false).loss;
}

// Central differences of the loss w.r.t. every element of one input tensor,
// compared with the oracle's gradient of that tensor.
void check_against_finite_differences(OracleProblem p, std::vector<double> OracleProblem::*input,
                                      const std::vector<double> &analytic, const char *name) {
  constexpr double h = 1e-5;
  REQUIRE(analytic.size() == (p.*input).size());
  double max_abs_gradient = 0.0;
  for (double g : analytic) max_abs_gradient = std::max(max_abs_gradient, std::abs(g));
  REQUIRE(max_abs_gradient > 1e-3); // the check must be able to fail
  double diff_sq = 0.0, ref_sq = 0.0;
  for (std::size_t k = 0; k < analytic.size(); ++k) {
    const double saved = (p.*input)[k];
    (p.*input)[k] = saved + h;
    const double up = loss_of(p);
    (p.*input)[k] = saved - h;
    const double down = loss_of(p);
    (p.*input)[k] = saved;
    const double numeric = (up - down) / (2 * h);
    INFO(name << "[" << k << "]: analytic " << analytic[k] << ", finite difference " << numeric);
    CHECK(std::abs(numeric - analytic[k]) <= 1e-6 * max_abs_gradient);
    diff_sq += (numeric - analytic[k]) * (numeric - analytic[k]);
    ref_sq += analytic[k] * analytic[k];
  }
  INFO(name << " relative L2 error " << std::sqrt(diff_sq / ref_sq));
  CHECK(std::sqrt(diff_sq / ref_sq) <= 1e-6);
}

double rel_l2(const std::vector<double> &a, const std::vector<double> &b) {
  double diff = 0.0, ref = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff += (a[k] - b[k]) * (a[k] - b[k]);
    ref += b[k] * b[k];
  }
  return std::sqrt(diff / ref);
}

} // namespace

TEST_CASE("oracle gradients match central finite differences", "[oracle]") {
  const double beta = GENERATE(0.0, 0.3, 0.5, 1.0);
  const double temperature = GENERATE(0.5, 1.0, 2.0);
  CAPTURE(beta, temperature);
  const OracleProblem p = tiny_problem(beta, temperature);
  const OracleResult result = run_oracle(p);
  REQUIRE(std::isfinite(result.loss));
  check_against_finite_differences(p, &OracleProblem::student_input, result.gradients.student_input, "x_s");
  check_against_finite_differences(p, &OracleProblem::student_weight, result.gradients.student_weight, "W_s");
  check_against_finite_differences(p, &OracleProblem::student_bias, result.gradients.student_bias, "b_s");
  // The ignored token's input gets no gradient at all.
  CHECK(result.gradients.student_input[2] == 0.0);
  CHECK(result.gradients.student_input[3] == 0.0);
}

TEST_CASE("oracle gradients hold for a negative temperature and without biases", "[oracle]") {
  OracleProblem p = tiny_problem(0.5, -1.5, 7);
  p.student_bias.clear();
  p.teacher_bias.clear();
  const OracleResult result = run_oracle(p);
  CHECK(result.gradients.student_bias.empty());
  check_against_finite_differences(p, &OracleProblem::student_input, result.gradients.student_input, "x_s");
  check_against_finite_differences(p, &OracleProblem::student_weight, result.gradients.student_weight, "W_s");
}

TEST_CASE("oracle forward matches the closed form on a two-word vocabulary", "[oracle]") {
  // T=1, V=2, H=Hs=1: z_s = x_s (w0, w1), z_t = x_t (u0, u1), target 1.
  OracleProblem p;
  p.tokens = 1;
  p.vocab = 2;
  p.hidden = 1;
  p.student_hidden = 1;
  p.student_input = {0.7};
  p.student_weight = {1.0, -2.0};
  p.teacher_input = {-0.4};
  p.teacher_weight = {3.0, 0.5};
  p.target = {1};
  p.scalars = {.beta = 0.25, .temperature = 2.0, .weight_hard = 0.3, .weight_soft = 0.7, .ignore_index = -1};

  const double zs0 = 0.7, zs1 = -1.4, zt0 = -1.2, zt1 = -0.2, tau = 2.0, beta = 0.25;
  const double ce = std::log(std::exp(zs0) + std::exp(zs1)) - zs1;
  const double q0 = 1 / (1 + std::exp((zs1 - zs0) / tau)), q1 = 1 - q0;
  const double p0 = 1 / (1 + std::exp((zt1 - zt0) / tau)), p1 = 1 - p0;
  const double m0 = (1 - beta) * q0 + beta * p0, m1 = (1 - beta) * q1 + beta * p1;
  const double kl_pm = p0 * std::log(p0 / m0) + p1 * std::log(p1 / m1);
  const double kl_qm = q0 * std::log(q0 / m0) + q1 * std::log(q1 / m1);
  const double expected = 0.3 * ce + 0.7 * (beta * kl_pm + (1 - beta) * kl_qm);
  CHECK(run_oracle(p).loss == Approx(expected).epsilon(1e-13));

  p.scalars.beta = 0.0; // forward KL(p || q)
  CHECK(run_oracle(p).loss ==
        Approx(0.3 * ce + 0.7 * (p0 * std::log(p0 / q0) + p1 * std::log(p1 / q1))).epsilon(1e-13));
  p.scalars.beta = 1.0; // reverse KL(q || p)
  CHECK(run_oracle(p).loss ==
        Approx(0.3 * ce + 0.7 * (q0 * std::log(q0 / p0) + q1 * std::log(q1 / p1))).epsilon(1e-13));
}

TEST_CASE("all tokens ignored: loss 0 and zero gradients, no NaN", "[oracle]") {
  const double beta = GENERATE(0.0, 0.5, 1.0);
  OracleProblem p = tiny_problem(beta, 1.0);
  p.target = {kIgnore, kIgnore, kIgnore};
  const OracleResult result = run_oracle(p);
  CHECK(result.loss == 0.0);
  for (const auto *grad :
       {&result.gradients.student_input, &result.gradients.student_weight, &result.gradients.student_bias}) {
    REQUIRE_FALSE(grad->empty());
    for (double g : *grad) REQUIRE(g == 0.0);
  }
}

TEST_CASE("N counts valid tokens only", "[oracle]") {
  // Ignoring a token removes its terms and divides by the smaller N: the
  // loss with tokens {0, 2} equals the mean of the two one-token losses.
  OracleProblem p = tiny_problem(0.5, 1.0);
  const double both = loss_of(p);
  OracleProblem first = p, last = p;
  first.target = {4, kIgnore, kIgnore};
  last.target = {kIgnore, kIgnore, 0};
  CHECK(both == Approx((loss_of(first) + loss_of(last)) / 2).epsilon(1e-14));
}

TEST_CASE("beta = 0 and beta = 1 are the limits of J/beta and J/(1-beta)", "[oracle]") {
  // J_beta -> 0 at both ends; its first-order term is the KL the special
  // cases compute: J(eps)/eps -> KL(p||q), J(1-eps)/eps -> KL(q||p).
  const double temperature = GENERATE(0.5, 2.0);
  constexpr double eps = 1e-9;
  for (const auto &[special, near] : {std::pair{0.0, eps}, std::pair{1.0, 1.0 - eps}}) {
    CAPTURE(special, temperature);
    OracleProblem at_limit = tiny_problem(special, temperature);
    at_limit.scalars.weight_hard = 0.0;
    at_limit.scalars.weight_soft = 1.0;
    OracleProblem close = at_limit;
    close.scalars.beta = near;
    const double scale = special == 0.0 ? near : 1.0 - near; // exact (Sterbenz)
    const OracleResult limit = run_oracle(at_limit);
    const OracleResult approach = run_oracle(close);
    CHECK(approach.loss / scale == Approx(limit.loss).epsilon(1e-5));
    std::vector<double> scaled = approach.gradients.student_weight;
    for (double &g : scaled) g /= scale;
    CHECK(rel_l2(scaled, limit.gradients.student_weight) < 1e-5);
  }
}

TEST_CASE("adding a constant to every logit of both heads leaves loss and gradients unchanged", "[oracle]") {
  const double beta = GENERATE(0.0, 0.5, 1.0);
  const OracleProblem p = tiny_problem(beta, 0.7);
  OracleProblem shifted = p;
  for (double &b : shifted.student_bias) b += 3.25;
  for (double &b : shifted.teacher_bias) b += 3.25;
  const OracleResult a = run_oracle(p), b = run_oracle(shifted);
  CHECK(b.loss == Approx(a.loss).epsilon(1e-13));
  CHECK(rel_l2(b.gradients.student_input, a.gradients.student_input) < 1e-12);
  CHECK(rel_l2(b.gradients.student_weight, a.gradients.student_weight) < 1e-12);
  // Shifting one class alone is no softmax shift: the loss must move (so
  // the checks above can fail).
  OracleProblem one_class = p;
  one_class.student_bias[3] += 3.25;
  CHECK(loss_of(one_class) != Approx(a.loss).epsilon(1e-6));
}

TEST_CASE("oracle rejects inconsistent problems", "[oracle]") {
  OracleProblem p = tiny_problem(0.5, 1.0);
  SECTION("temperature 0") {
    p.scalars.temperature = 0.0;
  }
  SECTION("beta outside [0, 1]") {
    p.scalars.beta = 1.5;
  }
  SECTION("target out of range") {
    p.target[0] = 7;
  }
  SECTION("wrong shape") {
    p.student_weight.pop_back();
  }
  CHECK_THROWS_AS(run_oracle(p), std::invalid_argument);
}

TEST_CASE("oracle_problem widens the bf16 inputs exactly", "[oracle]") {
  Workload w;
  w.tokens = 1;
  w.vocab = 2;
  w.hidden = 2;
  w.student_hidden = 1;
  HostInputs in;
  in.student_input = {0x3F80};          // 1
  in.student_weight = {0xC040, 0x3E00}; // -3, 0.125
  in.teacher_input = {0x3F00, 0x4000};  // 0.5, 2
  in.teacher_weight = {0, 0x8000, 0x3F80, 0xBF80};
  in.target = {1};
  const OracleProblem p = oracle_problem(w, in);
  CHECK(p.student_input == std::vector<double>{1.0});
  CHECK(p.student_weight == std::vector<double>{-3.0, 0.125});
  CHECK(p.teacher_input == std::vector<double>{0.5, 2.0});
  CHECK(p.teacher_weight == std::vector<double>{0.0, -0.0, 1.0, -1.0});
  CHECK(p.student_bias.empty());
  // z_s = (-3, 0.125), z_t = (0, 2): the loss is finite and positive.
  CHECK(run_oracle(p).loss > 0.0);
}
