#include "kernels/lm_head/oracle/cpu_oracle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/lm_head/oracle/fp64_arithmetic.hpp"
#include "lib/parallel/parallel_for.hpp"

namespace kibench {
namespace {

using oracle::dot;
using oracle::widen;
using Row = std::span<const double>;
using MutableRow = std::span<double>;

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

// Rows of one thread's tile share each streamed weight row, so the weight
// matrix is read from memory T / kRowTile times instead of T times.
constexpr std::int64_t kRowTile = 8;

std::size_t index(std::int64_t row, std::int64_t columns, std::int64_t column = 0) {
  return static_cast<std::size_t>(row * columns + column);
}

// out[i, v] = x[i, :] . w[v, :] + bias[v] for all i, v.
void linear(const std::vector<double> &x, const std::vector<double> &w, const std::vector<double> &bias,
            std::int64_t rows, std::int64_t vocab, std::int64_t width, std::vector<double> &out) {
  out.assign(static_cast<std::size_t>(rows * vocab), 0.0);
  parallel_for(0, rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
      const std::int64_t tile_end = std::min(end, tile + kRowTile);
      for (std::int64_t v = 0; v < vocab; ++v) {
        const double *weight_row = &w[index(v, width)];
        const double b = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(v)];
        for (std::int64_t i = tile; i < tile_end; ++i)
          out[index(i, vocab, v)] = dot(&x[index(i, width)], weight_row, width) + b;
      }
    }
  });
}

double logsumexp(Row values, double scale) {
  double peak = kNegativeInfinity;
  for (double v : values) peak = std::max(peak, v * scale);
  if (peak == kNegativeInfinity) return peak;
  double sum = 0.0;
  for (double v : values) sum += std::exp(v * scale - peak);
  return peak + std::log(sum);
}

// out = log_softmax(z / tau), max-subtracted.
void log_softmax(Row z, double temperature, MutableRow out) {
  for (std::size_t k = 0; k < z.size(); ++k) out[k] = z[k] / temperature;
  const double lse = logsumexp(out, 1.0);
  for (double &v : out) v -= lse;
}

// log(e^a + e^b) without overflow; -inf when both are -inf.
double log_add_exp(double a, double b) {
  const double peak = std::max(a, b);
  if (peak == kNegativeInfinity) return peak;
  return peak + std::log1p(std::exp(-std::abs(a - b)));
}

// KL(a || b) = sum_k a_k (log a_k - log b_k) from log-probabilities; terms
// with a_k = 0 contribute 0 (the limit), not 0 * -inf.
double kl_divergence(Row log_a, Row log_b) {
  double sum = 0.0;
  for (std::size_t k = 0; k < log_a.size(); ++k) {
    const double a = std::exp(log_a[k]);
    if (a != 0.0) sum += a * (log_a[k] - log_b[k]);
  }
  return sum;
}

// Per-thread scratch for one token row.
struct RowWorkspace {
  explicit RowWorkspace(std::int64_t vocab)
      : log_q(static_cast<std::size_t>(vocab)), log_p(static_cast<std::size_t>(vocab)),
        log_m(static_cast<std::size_t>(vocab)) {}
  std::vector<double> log_q, log_p, log_m;
};

// Fills log q, log p and (for 0 < beta < 1) log m of one row; returns J_i.
double soft_loss_row(Row z_s, Row z_t, const LossScalars &s, RowWorkspace &ws) {
  log_softmax(z_s, s.temperature, ws.log_q);
  log_softmax(z_t, s.temperature, ws.log_p);
  if (s.beta == 0.0) return kl_divergence(ws.log_p, ws.log_q); // forward KL(p || q)
  if (s.beta == 1.0) return kl_divergence(ws.log_q, ws.log_p); // reverse KL(q || p)
  // log m = logsumexp(log q + log(1 - beta), log p + log beta)
  const double log_student_share = std::log1p(-s.beta);
  const double log_teacher_share = std::log(s.beta);
  for (std::size_t k = 0; k < ws.log_m.size(); ++k)
    ws.log_m[k] = log_add_exp(ws.log_q[k] + log_student_share, ws.log_p[k] + log_teacher_share);
  return s.beta * kl_divergence(ws.log_p, ws.log_m) + (1.0 - s.beta) * kl_divergence(ws.log_q, ws.log_m);
}

bool is_valid(const OracleProblem &problem, std::int64_t row) {
  return problem.target[static_cast<std::size_t>(row)] != problem.scalars.ignore_index;
}

double valid_count(const OracleProblem &problem) {
  std::int64_t valid = 0;
  for (std::int64_t i = 0; i < problem.tokens; ++i) valid += is_valid(problem, i) ? 1 : 0;
  return static_cast<double>(std::max<std::int64_t>(1, valid));
}

Row row_of(const std::vector<double> &matrix, std::int64_t row, std::int64_t columns) {
  return Row(&matrix[index(row, columns)], static_cast<std::size_t>(columns));
}

// g = scale * (w_h (softmax(z_s) - onehot(y)) + w_s dJ/dz_s) for one valid row,
// with ws holding that row's log q, log p, log m (from soft_loss_row).
void gradient_row(Row z_s, std::int64_t y, const LossScalars &s, double scale, const RowWorkspace &ws,
                  MutableRow g) {
  const double tau = s.temperature;
  const std::size_t vocab = z_s.size();
  // Coefficient c_k with dJ/dz_k = factor * q_k * (c_k - mean of c under q).
  //   0 < beta < 1: factor (1 - beta) / tau, c = log q - log m
  //   beta = 1:     factor 1 / tau,          c = log q - log p
  //   beta = 0:     dJ/dz_k = (q_k - p_k) / tau, handled apart.
  double kl = 0.0;
  double factor = 0.0;
  if (s.beta == 1.0) {
    kl = kl_divergence(ws.log_q, ws.log_p);
    factor = 1.0 / tau;
  } else if (s.beta != 0.0) {
    kl = kl_divergence(ws.log_q, ws.log_m);
    factor = (1.0 - s.beta) / tau;
  }
  const double lse = logsumexp(z_s, 1.0);
  for (std::size_t k = 0; k < vocab; ++k) {
    const double q = std::exp(ws.log_q[k]);
    double soft = 0.0;
    if (s.beta == 0.0) {
      soft = (q - std::exp(ws.log_p[k])) / tau;
    } else if (q != 0.0) {
      const double log_ratio = ws.log_q[k] - (s.beta == 1.0 ? ws.log_p[k] : ws.log_m[k]);
      soft = factor * q * (log_ratio - kl);
    }
    const double hard = std::exp(z_s[k] - lse) - (static_cast<std::int64_t>(k) == y ? 1.0 : 0.0);
    g[k] = scale * (s.weight_hard * hard + s.weight_soft * soft);
  }
}

void require(bool condition, std::string_view what) {
  if (!condition) throw std::invalid_argument(fmt::format("oracle problem: {}", what));
}

} // namespace

OracleProblem oracle_problem(const Workload &workload, const HostInputs &inputs) {
  OracleProblem problem;
  problem.tokens = workload.tokens;
  problem.vocab = workload.vocab;
  problem.hidden = workload.hidden;
  problem.student_hidden = workload.student_hidden;
  problem.student_input = widen(inputs.student_input);
  problem.student_weight = widen(inputs.student_weight);
  problem.teacher_input = widen(inputs.teacher_input);
  problem.teacher_weight = widen(inputs.teacher_weight);
  problem.target = inputs.target;
  problem.student_bias = widen(inputs.student_bias);
  problem.teacher_bias = widen(inputs.teacher_bias);
  problem.scalars = workload.scalars;
  return problem;
}

void validate(const OracleProblem &p) {
  const auto size = [](std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a * b); };
  require(p.tokens >= 0 && p.vocab > 0 && p.hidden > 0 && p.student_hidden > 0, "sizes must be positive");
  require(p.student_input.size() == size(p.tokens, p.student_hidden), "student_input is not [T, Hs]");
  require(p.student_weight.size() == size(p.vocab, p.student_hidden), "student_weight is not [V, Hs]");
  require(p.teacher_input.size() == size(p.tokens, p.hidden), "teacher_input is not [T, H]");
  require(p.teacher_weight.size() == size(p.vocab, p.hidden), "teacher_weight is not [V, H]");
  require(p.target.size() == size(p.tokens, 1), "target is not [T]");
  require(p.student_bias.empty() || p.student_bias.size() == size(p.vocab, 1), "student_bias is not [V]");
  require(p.teacher_bias.empty() || p.teacher_bias.size() == size(p.vocab, 1), "teacher_bias is not [V]");
  require(p.scalars.temperature != 0.0 && std::isfinite(p.scalars.temperature),
          "temperature must be finite and nonzero");
  require(p.scalars.beta >= 0.0 && p.scalars.beta <= 1.0, "beta must lie in [0, 1]");
  for (std::int64_t y : p.target)
    require(y == p.scalars.ignore_index || (y >= 0 && y < p.vocab),
            fmt::format("target {} outside [0, {}) and not ignore_index", y, p.vocab));
}

OracleLogits oracle_logits(const OracleProblem &p) {
  OracleLogits logits;
  linear(p.student_input, p.student_weight, p.student_bias, p.tokens, p.vocab, p.student_hidden,
         logits.student);
  linear(p.teacher_input, p.teacher_weight, p.teacher_bias, p.tokens, p.vocab, p.hidden, logits.teacher);
  return logits;
}

double oracle_loss(const OracleProblem &p, const OracleLogits &logits) {
  // Per-row terms first (in parallel), then summed in row order.
  std::vector<double> hard(static_cast<std::size_t>(p.tokens), 0.0);
  std::vector<double> soft(static_cast<std::size_t>(p.tokens), 0.0);
  parallel_for(0, p.tokens, [&](std::int64_t begin, std::int64_t end) {
    RowWorkspace ws(p.vocab);
    for (std::int64_t i = begin; i < end; ++i) {
      if (!is_valid(p, i)) continue;
      const Row z_s = row_of(logits.student, i, p.vocab);
      const Row z_t = row_of(logits.teacher, i, p.vocab);
      const auto y = static_cast<std::size_t>(p.target[static_cast<std::size_t>(i)]);
      hard[static_cast<std::size_t>(i)] = logsumexp(z_s, 1.0) - z_s[y]; // CE on raw logits
      soft[static_cast<std::size_t>(i)] = soft_loss_row(z_s, z_t, p.scalars, ws);
    }
  });
  double hard_sum = 0.0, soft_sum = 0.0;
  for (std::size_t i = 0; i < hard.size(); ++i) {
    hard_sum += hard[i];
    soft_sum += soft[i];
  }
  const double n = valid_count(p);
  return p.scalars.weight_hard * hard_sum / n + p.scalars.weight_soft * soft_sum / n;
}

std::vector<double> oracle_logit_gradient(const OracleProblem &p, const OracleLogits &logits) {
  const std::int64_t T = p.tokens, V = p.vocab;
  const double scale = 1.0 / valid_count(p);
  std::vector<double> g(static_cast<std::size_t>(T * V), 0.0);
  parallel_for(0, T, [&](std::int64_t begin, std::int64_t end) {
    RowWorkspace ws(V);
    for (std::int64_t i = begin; i < end; ++i) {
      if (!is_valid(p, i)) continue;
      const Row z_s = row_of(logits.student, i, V);
      soft_loss_row(z_s, row_of(logits.teacher, i, V), p.scalars, ws);
      gradient_row(z_s, p.target[static_cast<std::size_t>(i)], p.scalars, scale, ws,
                   MutableRow(&g[index(i, V)], static_cast<std::size_t>(V)));
    }
  });
  return g;
}

OracleGradients oracle_gradients(const OracleProblem &p, const OracleLogits &logits) {
  const std::int64_t T = p.tokens, V = p.vocab, Hs = p.student_hidden;
  const std::vector<double> g = oracle_logit_gradient(p, logits);

  OracleGradients grads;
  // grad x_s[i, :] = sum_v G[i, v] W_s[v, :], v ascending.
  grads.student_input.assign(static_cast<std::size_t>(T * Hs), 0.0);
  parallel_for(0, T, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
      const std::int64_t tile_end = std::min(end, tile + kRowTile);
      for (std::int64_t v = 0; v < V; ++v) {
        const double *weight_row = &p.student_weight[index(v, Hs)];
        for (std::int64_t i = tile; i < tile_end; ++i) {
          const double coefficient = g[index(i, V, v)];
          if (coefficient == 0.0) continue;
          double *out = &grads.student_input[index(i, Hs)];
          for (std::int64_t h = 0; h < Hs; ++h) out[h] += coefficient * weight_row[h];
        }
      }
    }
  });
  // grad W_s[v, :] = sum_i G[i, v] x_s[i, :] and grad b_s[v] = sum_i G[i, v],
  // i ascending; split by vocabulary rows.
  grads.student_weight.assign(static_cast<std::size_t>(V * Hs), 0.0);
  const bool has_bias = !p.student_bias.empty();
  if (has_bias) grads.student_bias.assign(static_cast<std::size_t>(V), 0.0);
  parallel_for(0, V, [&](std::int64_t begin, std::int64_t end) {
    // A tile of vocabulary columns uses each cache line of G's rows whole.
    for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
      const std::int64_t tile_end = std::min(end, tile + kRowTile);
      for (std::int64_t i = 0; i < T; ++i) {
        const double *input_row = &p.student_input[index(i, Hs)];
        for (std::int64_t v = tile; v < tile_end; ++v) {
          const double coefficient = g[index(i, V, v)];
          if (coefficient == 0.0) continue;
          if (has_bias) grads.student_bias[static_cast<std::size_t>(v)] += coefficient;
          double *out = &grads.student_weight[index(v, Hs)];
          for (std::int64_t h = 0; h < Hs; ++h) out[h] += coefficient * input_row[h];
        }
      }
    }
  });
  return grads;
}

OracleResult run_oracle(const OracleProblem &problem, bool with_gradients) {
  validate(problem);
  const OracleLogits logits = oracle_logits(problem);
  OracleResult result;
  result.loss = oracle_loss(problem, logits);
  if (with_gradients) result.gradients = oracle_gradients(problem, logits);
  return result;
}

} // namespace kibench
