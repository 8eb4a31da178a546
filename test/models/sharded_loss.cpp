#include "test/models/sharded_loss.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

namespace kibench::vocab_parallel {

namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

std::size_t at(std::int64_t row, std::int64_t columns, std::int64_t column = 0) {
  return static_cast<std::size_t>(row * columns + column);
}

// log(e^a + e^b) without overflow; -inf when both are -inf.
double log_add_exp(double a, double b) {
  const double peak = std::max(a, b);
  if (peak == kNegativeInfinity) return peak;
  return peak + std::log1p(std::exp(-std::abs(a - b)));
}

// Statistic slots per token row in the reduction buffers.
enum Max { kMaxRaw, kMaxStudent, kMaxTeacher, kMaxSlots };
enum Sum { kSumRaw, kSumStudent, kSumTeacher, kTargetLogit, kSumSlots };
enum Kl { kKlFirst, kKlSecond, kKlSlots };

// What one rank holds: its rows of the heads' output, both logit slices,
// and its copies of the reduction buffers.
struct Rank {
  VocabShard shard;
  std::vector<double> z_s, z_t; // [T, size]
  std::vector<double> maxima, sums, kl;
  std::vector<double> grad_input; // [T, Hs], partial until reduced
};

// z[i, v - begin] = x[i] · w[v] (+ bias[v]) for the shard's rows v.
void slice_logits(const std::vector<double> &x, const std::vector<double> &w, const std::vector<double> &bias,
                  std::int64_t tokens, std::int64_t width, const VocabShard &shard,
                  std::vector<double> &out) {
  out.assign(at(tokens, shard.size()), 0.0);
  for (std::int64_t i = 0; i < tokens; ++i)
    for (std::int64_t v = shard.begin; v < shard.end; ++v) {
      double sum = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(v)];
      for (std::int64_t h = 0; h < width; ++h) sum += x[at(i, width, h)] * w[at(v, width, h)];
      out[at(i, shard.size(), v - shard.begin)] = sum;
    }
}

std::vector<std::span<double>> buffers(std::vector<Rank> &ranks, std::vector<double> Rank::*member) {
  std::vector<std::span<double>> out;
  for (Rank &r : ranks) out.emplace_back(r.*member);
  return out;
}

// The per-row global statistics every rank has after step 3.
struct RowStatistics {
  double lse_raw, lse_q, lse_p, target_logit;
};

RowStatistics row_statistics(const Rank &r, std::int64_t i) {
  const double *m = &r.maxima[at(i, kMaxSlots)];
  const double *s = &r.sums[at(i, kSumSlots)];
  const auto lse = [](double peak, double sum) {
    return peak == kNegativeInfinity ? peak : peak + std::log(sum);
  };
  return {lse(m[kMaxRaw], s[kSumRaw]), lse(m[kMaxStudent], s[kSumStudent]),
          lse(m[kMaxTeacher], s[kSumTeacher]), s[kTargetLogit]};
}

} // namespace

OracleResult sharded_oracle(const OracleProblem &p, Communicator &communicator, bool with_gradients) {
  validate(p);
  const std::int64_t T = p.tokens, Hs = p.student_hidden;
  const LossScalars &s = p.scalars;
  const double tau = s.temperature;
  std::vector<Rank> ranks;
  for (const VocabShard &shard : vocab_shards(p.vocab, communicator.ranks())) {
    Rank &r = ranks.emplace_back();
    r.shard = shard;
  }

  // 1. The logit slices, and 2. the row maxima.
  for (Rank &r : ranks) {
    const std::int64_t n = r.shard.size();
    slice_logits(p.student_input, p.student_weight, p.student_bias, T, Hs, r.shard, r.z_s);
    slice_logits(p.teacher_input, p.teacher_weight, p.teacher_bias, T, p.hidden, r.shard, r.z_t);
    r.maxima.assign(at(T, kMaxSlots), kNegativeInfinity);
    for (std::int64_t i = 0; i < T; ++i) {
      double *m = &r.maxima[at(i, kMaxSlots)];
      for (std::int64_t k = 0; k < n; ++k) {
        const double zs = r.z_s[at(i, n, k)], zt = r.z_t[at(i, n, k)];
        m[kMaxRaw] = std::max(m[kMaxRaw], zs);
        m[kMaxStudent] = std::max(m[kMaxStudent], zs / tau);
        m[kMaxTeacher] = std::max(m[kMaxTeacher], zt / tau);
      }
    }
  }
  communicator.all_reduce_max(buffers(ranks, &Rank::maxima));

  // 3. The sums of exponentials under the global maxima, and the target logit.
  for (Rank &r : ranks) {
    const std::int64_t n = r.shard.size();
    r.sums.assign(at(T, kSumSlots), 0.0);
    for (std::int64_t i = 0; i < T; ++i) {
      const double *m = &r.maxima[at(i, kMaxSlots)];
      double *sum = &r.sums[at(i, kSumSlots)];
      for (std::int64_t k = 0; k < n; ++k) {
        const double zs = r.z_s[at(i, n, k)], zt = r.z_t[at(i, n, k)];
        sum[kSumRaw] += std::exp(zs - m[kMaxRaw]);
        sum[kSumStudent] += std::exp(zs / tau - m[kMaxStudent]);
        sum[kSumTeacher] += std::exp(zt / tau - m[kMaxTeacher]);
      }
      const std::int64_t y = p.target[static_cast<std::size_t>(i)];
      if (y != s.ignore_index && r.shard.holds(y)) sum[kTargetLogit] = r.z_s[at(i, n, y - r.shard.begin)];
    }
  }
  communicator.all_reduce_sum(buffers(ranks, &Rank::sums));

  // 4. The KL partial sums over each slice. For a row: log q, log p (and
  // log m) of the slice from the global log-sum-exps.
  const double log_student_share = s.beta > 0.0 && s.beta < 1.0 ? std::log1p(-s.beta) : 0.0;
  const double log_teacher_share = s.beta > 0.0 && s.beta < 1.0 ? std::log(s.beta) : 0.0;
  const auto log_probabilities = [&](const Rank &r, const RowStatistics &st, std::int64_t i, std::int64_t k) {
    const std::int64_t n = r.shard.size();
    const double log_q = r.z_s[at(i, n, k)] / tau - st.lse_q, log_p = r.z_t[at(i, n, k)] / tau - st.lse_p;
    const double log_m = s.beta > 0.0 && s.beta < 1.0
                             ? log_add_exp(log_q + log_student_share, log_p + log_teacher_share)
                             : 0.0;
    return std::array<double, 3>{log_q, log_p, log_m};
  };
  // KL(a‖b) terms a (log a − log b), 0 where a = 0 (the limit).
  const auto kl_term = [](double log_a, double log_b) {
    const double a = std::exp(log_a);
    return a != 0.0 ? a * (log_a - log_b) : 0.0;
  };
  for (Rank &r : ranks) {
    const std::int64_t n = r.shard.size();
    r.kl.assign(at(T, kKlSlots), 0.0);
    for (std::int64_t i = 0; i < T; ++i) {
      const RowStatistics st = row_statistics(r, i);
      double *kl = &r.kl[at(i, kKlSlots)];
      for (std::int64_t k = 0; k < n; ++k) {
        const auto [log_q, log_p, log_m] = log_probabilities(r, st, i, k);
        if (s.beta == 0.0) {
          kl[kKlFirst] += kl_term(log_p, log_q); // KL(p‖q)
        } else if (s.beta == 1.0) {
          kl[kKlFirst] += kl_term(log_q, log_p); // KL(q‖p)
        } else {
          kl[kKlFirst] += kl_term(log_p, log_m);  // KL(p‖m)
          kl[kKlSecond] += kl_term(log_q, log_m); // KL(q‖m)
        }
      }
    }
  }
  communicator.all_reduce_sum(buffers(ranks, &Rank::kl));

  // The loss, as every rank has it (rank 0's copy).
  const auto is_valid = [&](std::int64_t i) {
    return p.target[static_cast<std::size_t>(i)] != s.ignore_index;
  };
  std::int64_t valid = 0;
  for (std::int64_t i = 0; i < T; ++i) valid += is_valid(i) ? 1 : 0;
  const double N = static_cast<double>(std::max<std::int64_t>(valid, 1));
  const auto soft_loss = [&](const double *kl) {
    if (s.beta == 0.0 || s.beta == 1.0) return kl[kKlFirst];
    return s.beta * kl[kKlFirst] + (1.0 - s.beta) * kl[kKlSecond];
  };
  double hard_sum = 0.0, soft_sum = 0.0;
  for (std::int64_t i = 0; i < T; ++i) {
    if (!is_valid(i)) continue;
    const RowStatistics st = row_statistics(ranks.front(), i);
    hard_sum += st.lse_raw - st.target_logit;
    soft_sum += soft_loss(&ranks.front().kl[at(i, kKlSlots)]);
  }
  OracleResult result;
  result.loss = s.weight_hard * hard_sum / N + s.weight_soft * soft_sum / N;
  if (!with_gradients) return result;

  // 5. Each rank's slice of G, its grad W_s and grad b_s rows, and its
  // share of grad x_s.
  OracleGradients &g = result.gradients;
  g.student_weight.assign(at(p.vocab, Hs), 0.0);
  if (!p.student_bias.empty()) g.student_bias.assign(static_cast<std::size_t>(p.vocab), 0.0);
  for (Rank &r : ranks) {
    const std::int64_t n = r.shard.size();
    std::vector<double> G(at(T, n), 0.0);
    for (std::int64_t i = 0; i < T; ++i) {
      if (!is_valid(i)) continue;
      const RowStatistics st = row_statistics(r, i);
      const double *kl = &r.kl[at(i, kKlSlots)];
      // dJ/dz_k = factor · q_k (c_k − KL(q‖·)), c = log q − log m (or log p
      // at β = 1); (q_k − p_k)/τ at β = 0 (docs/loss-math.md).
      const double kl_q = s.beta == 1.0 ? kl[kKlFirst] : kl[kKlSecond];
      const double factor = s.beta == 1.0 ? 1.0 / tau : (1.0 - s.beta) / tau;
      const std::int64_t y = p.target[static_cast<std::size_t>(i)];
      for (std::int64_t k = 0; k < n; ++k) {
        const auto [log_q, log_p, log_m] = log_probabilities(r, st, i, k);
        const double q = std::exp(log_q);
        double soft = 0.0;
        if (s.beta == 0.0) {
          soft = (q - std::exp(log_p)) / tau;
        } else if (q != 0.0) {
          soft = factor * q * (log_q - (s.beta == 1.0 ? log_p : log_m) - kl_q);
        }
        const double hard = std::exp(r.z_s[at(i, n, k)] - st.lse_raw) - (r.shard.begin + k == y ? 1.0 : 0.0);
        G[at(i, n, k)] = (s.weight_hard * hard + s.weight_soft * soft) / N;
      }
    }
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t v = r.shard.begin + k;
      for (std::int64_t i = 0; i < T; ++i) {
        const double coefficient = G[at(i, n, k)];
        if (coefficient == 0.0) continue;
        for (std::int64_t h = 0; h < Hs; ++h)
          g.student_weight[at(v, Hs, h)] += coefficient * p.student_input[at(i, Hs, h)];
        if (!g.student_bias.empty()) g.student_bias[static_cast<std::size_t>(v)] += coefficient;
      }
    }
    r.grad_input.assign(at(T, Hs), 0.0);
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t k = 0; k < n; ++k) {
        const double coefficient = G[at(i, n, k)];
        if (coefficient == 0.0) continue;
        const double *w = &p.student_weight[at(r.shard.begin + k, Hs)];
        for (std::int64_t h = 0; h < Hs; ++h) r.grad_input[at(i, Hs, h)] += coefficient * w[h];
      }
  }
  communicator.all_reduce_sum(buffers(ranks, &Rank::grad_input));
  g.student_input = ranks.front().grad_input;
  return result;
}

} // namespace kibench::vocab_parallel
