// The loss of one token row as the torch-equivalent reference computes it
// from its fp32 logits (docs/loss-math.md, "Reference semantics"), forward
// and autograd backward, every intermediate an fp32 value:
//
//   CE = -log_softmax(z_s)[y]
//   lq = log_softmax(z_s / tau),  lp = log_softmax(z_t / tau)
//   0 < beta < 1: lm = logsumexp(stack(lq + log(1-beta), lp + log(beta)))
//                 J  = beta * kl_div(lm, lp) + (1-beta) * kl_div(lm, lq)
//   beta = 0:     J  = kl_div(lq, lp)        beta = 1: J = kl_div(lp, lq)
//   kl_div(input, target, log_target=True) = sum_k exp(target_k) (target_k - input_k)
//
// The backward is the chain rule through exactly these ops (kl_div,
// logsumexp, log_softmax, the division by tau), not the closed form the
// oracle uses, so comparing the two checks both.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/workload/workload.hpp"

namespace kibench::reference {

struct RowLoss {
  float cross_entropy = 0.0f; // -log_softmax(z_s)[y]
  float jsd = 0.0f;           // J of the row (before masking and / N)
};

// The loss scalars as the fp32 values torch holds.
struct ChainScalars {
  explicit ChainScalars(const LossScalars &s);
  enum class Mode { forward_kl, reverse_kl, mixture }; // beta = 0, beta = 1, else
  float beta, temperature, weight_hard, weight_soft;
  float log_student_share, log_teacher_share; // log(1 - beta), log(beta) in fp32
  Mode mode;
};

// Scratch for one row at a time; one per thread.
class RowChain {
public:
  RowChain(std::int64_t vocab, const LossScalars &scalars);

  // Forward of one row from its logits; keeps what backward() needs.
  RowLoss forward(std::span<const float> z_s, std::span<const float> z_t, std::int64_t target);

  // grad_z = d(hard_scale * CE + soft_scale * J)/dz_s of the row last given
  // to forward(), in fp32 (the caller rounds it where torch would).
  void backward(std::int64_t target, float hard_scale, float soft_scale, std::span<float> grad_z);

  [[nodiscard]] const ChainScalars &scalars() const { return scalars_; }

private:
  ChainScalars scalars_;
  std::vector<float> scaled_, log_softmax_raw_, log_q_, log_p_, log_m_, grad_log_q_;
};

} // namespace kibench::reference
