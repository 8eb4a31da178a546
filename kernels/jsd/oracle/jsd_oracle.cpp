#include "kernels/jsd/oracle/jsd_oracle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "lib/parallel/parallel_for.hpp"

namespace kibench {
namespace {

// log(e^a + e^b) without overflow; -inf when both are -inf.
double log_add_exp(double a, double b) {
  const double peak = std::max(a, b);
  if (peak == -std::numeric_limits<double>::infinity()) return peak;
  return peak + std::log1p(std::exp(-std::abs(a - b)));
}

// a (u - v) with the limit 0 where a = 0 (so 0 * -inf is not NaN).
double weighted(double a, double u, double v) {
  return a == 0.0 ? 0.0 : a * (u - v);
}

void require(bool condition, std::string_view what) {
  if (!condition) throw std::invalid_argument(fmt::format("jsd oracle problem: {}", what));
}

} // namespace

JsdProblem jsd_problem(const Workload &workload, const HostInputs &inputs) {
  JsdProblem problem;
  problem.tokens = workload.tokens;
  problem.vocab = workload.vocab;
  problem.student_log_probs.assign(inputs.student_log_probs.begin(), inputs.student_log_probs.end());
  problem.teacher_log_probs.assign(inputs.teacher_log_probs.begin(), inputs.teacher_log_probs.end());
  problem.target = inputs.target;
  problem.beta = workload.scalars.beta;
  problem.ignore_index = workload.scalars.ignore_index;
  return problem;
}

void validate(const JsdProblem &p) {
  const auto cells = static_cast<std::size_t>(p.tokens * p.vocab);
  require(p.tokens >= 0 && p.vocab > 0, "sizes must be positive");
  require(p.student_log_probs.size() == cells, "student_log_probs is not [T, V]");
  require(p.teacher_log_probs.size() == cells, "teacher_log_probs is not [T, V]");
  require(p.target.size() == static_cast<std::size_t>(p.tokens), "target is not [T]");
  require(p.beta >= 0.0 && p.beta <= 1.0, "beta must lie in [0, 1]");
}

JsdResult run_jsd_oracle(const JsdProblem &p, bool with_gradient) {
  validate(p);
  const std::int64_t T = p.tokens, V = p.vocab;
  std::int64_t valid = 0;
  for (const std::int64_t y : p.target) valid += y != p.ignore_index ? 1 : 0;
  const double scale = 1.0 / static_cast<double>(std::max<std::int64_t>(1, valid));
  const double log_beta = std::log(p.beta), log_student_share = std::log1p(-p.beta);

  JsdResult result;
  if (with_gradient) result.gradient.assign(static_cast<std::size_t>(T * V), 0.0);
  std::vector<double> rows(static_cast<std::size_t>(T), 0.0);
  parallel_for(0, T, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      if (p.target[static_cast<std::size_t>(i)] == p.ignore_index) continue;
      double sum = 0.0; // in column order
      for (std::int64_t k = 0; k < V; ++k) {
        const auto at = static_cast<std::size_t>(i * V + k);
        const double x = p.student_log_probs[at], y = p.teacher_log_probs[at];
        const double q = std::exp(x), pt = std::exp(y);
        double term = 0.0, derivative = 0.0;
        if (p.beta == 0.0) { // forward KL(p || q)
          term = weighted(pt, y, x);
          derivative = -pt;
        } else if (p.beta == 1.0) { // reverse KL(q || p)
          term = weighted(q, x, y);
          derivative = term + q;
        } else {
          const double log_m = log_add_exp(y + log_beta, x + log_student_share);
          term = p.beta * weighted(pt, y, log_m) + (1.0 - p.beta) * weighted(q, x, log_m);
          derivative = (1.0 - p.beta) * weighted(q, x, log_m);
        }
        sum += term;
        if (with_gradient) result.gradient[at] = derivative * scale;
      }
      rows[static_cast<std::size_t>(i)] = sum;
    }
  });
  double total = 0.0;
  for (const double row : rows) total += row; // in row order
  result.loss = total * scale;
  return result;
}

} // namespace kibench
