#include "kernels/lm_head/reference/host_reference_chain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kibench::reference {
namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

// torch's log_softmax in fp32: (x - max) - log(sum exp(x - max)).
void log_softmax(std::span<const float> x, std::span<float> out) {
  float peak = kNegativeInfinity;
  for (float v : x) peak = std::max(peak, v);
  float sum = 0.0f;
  for (float v : x) sum += std::exp(v - peak);
  const float log_sum = std::log(sum);
  for (std::size_t k = 0; k < x.size(); ++k) out[k] = (x[k] - peak) - log_sum;
}

// kl_div(input, target, log_target=True) summed over the row.
float kl_div_sum(std::span<const float> input, std::span<const float> target) {
  float sum = 0.0f;
  for (std::size_t k = 0; k < input.size(); ++k) sum += std::exp(target[k]) * (target[k] - input[k]);
  return sum;
}

ChainScalars::Mode mode_of(double beta) {
  if (beta == 0.0) return ChainScalars::Mode::forward_kl;
  if (beta == 1.0) return ChainScalars::Mode::reverse_kl;
  return ChainScalars::Mode::mixture;
}

} // namespace

ChainScalars::ChainScalars(const LossScalars &s)
    : beta(static_cast<float>(s.beta)), temperature(static_cast<float>(s.temperature)),
      weight_hard(static_cast<float>(s.weight_hard)), weight_soft(static_cast<float>(s.weight_soft)),
      log_student_share(std::log(static_cast<float>(1.0 - s.beta))),
      log_teacher_share(std::log(static_cast<float>(s.beta))), mode(mode_of(s.beta)) {}

RowChain::RowChain(std::int64_t vocab, const LossScalars &scalars)
    : scalars_(scalars), scaled_(static_cast<std::size_t>(vocab)),
      log_softmax_raw_(static_cast<std::size_t>(vocab)), log_q_(static_cast<std::size_t>(vocab)),
      log_p_(static_cast<std::size_t>(vocab)), log_m_(static_cast<std::size_t>(vocab)),
      grad_log_q_(static_cast<std::size_t>(vocab)) {}

RowLoss RowChain::forward(std::span<const float> z_s, std::span<const float> z_t, std::int64_t target) {
  const ChainScalars &s = scalars_;
  RowLoss loss;
  log_softmax(z_s, log_softmax_raw_);
  loss.cross_entropy = -log_softmax_raw_[static_cast<std::size_t>(target)];

  for (std::size_t k = 0; k < z_s.size(); ++k) scaled_[k] = z_s[k] / s.temperature;
  log_softmax(scaled_, log_q_);
  for (std::size_t k = 0; k < z_t.size(); ++k) scaled_[k] = z_t[k] / s.temperature;
  log_softmax(scaled_, log_p_);

  switch (s.mode) {
  case ChainScalars::Mode::forward_kl:
    loss.jsd = kl_div_sum(log_q_, log_p_);
    break;
  case ChainScalars::Mode::reverse_kl:
    loss.jsd = kl_div_sum(log_p_, log_q_);
    break;
  case ChainScalars::Mode::mixture: {
    // torch.logsumexp over the stacked pair: max + log(sum exp(x - max)).
    for (std::size_t k = 0; k < z_s.size(); ++k) {
      const float a = log_q_[k] + s.log_student_share;
      const float b = log_p_[k] + s.log_teacher_share;
      const float peak = std::max(a, b);
      log_m_[k] = peak == kNegativeInfinity ? peak : std::log(std::exp(a - peak) + std::exp(b - peak)) + peak;
    }
    const float teacher_kl = kl_div_sum(log_m_, log_p_);
    const float student_kl = kl_div_sum(log_m_, log_q_);
    loss.jsd = s.beta * teacher_kl + (1.0f - s.beta) * student_kl;
    break;
  }
  }
  return loss;
}

void RowChain::backward(std::int64_t target, float hard_scale, float soft_scale, std::span<float> grad_z) {
  const ChainScalars &s = scalars_;
  const std::size_t vocab = grad_z.size();
  // kl_div's backward: d/d input = -g exp(target); d/d target = g exp(target) (target - input + 1).
  switch (s.mode) {
  case ChainScalars::Mode::forward_kl: // J = kl_div(lq, lp): lq is the input
    for (std::size_t k = 0; k < vocab; ++k) grad_log_q_[k] = -soft_scale * std::exp(log_p_[k]);
    break;
  case ChainScalars::Mode::reverse_kl: // J = kl_div(lp, lq): lq is the target
    for (std::size_t k = 0; k < vocab; ++k)
      grad_log_q_[k] = soft_scale * std::exp(log_q_[k]) * (log_q_[k] - log_p_[k] + 1.0f);
    break;
  case ChainScalars::Mode::mixture: {
    const float student_scale = soft_scale * (1.0f - s.beta);
    const float teacher_scale = soft_scale * s.beta;
    for (std::size_t k = 0; k < vocab; ++k) {
      const float q = std::exp(log_q_[k]);
      const float p = std::exp(log_p_[k]);
      // lq as the target of the student's kl_div ...
      const float direct = student_scale * q * (log_q_[k] - log_m_[k] + 1.0f);
      // ... and through lm, the input of both kl_divs, whose logsumexp
      // passes exp(a - lm) of its gradient back to a = lq + log(1 - beta).
      const float grad_log_m = -(teacher_scale * p) - student_scale * q;
      const float through_mixture = grad_log_m * std::exp(log_q_[k] + s.log_student_share - log_m_[k]);
      grad_log_q_[k] = direct + through_mixture;
    }
    break;
  }
  }
  // log_softmax's backward: grad_in = grad_out - exp(out) * sum(grad_out), then / tau.
  float grad_sum = 0.0f;
  for (float g : grad_log_q_) grad_sum += g;
  // The cross entropy reaches log_softmax(z_s) as grad_out = -hard_scale at the target.
  for (std::size_t k = 0; k < vocab; ++k) {
    const float soft = (grad_log_q_[k] - std::exp(log_q_[k]) * grad_sum) / s.temperature;
    const float hard = hard_scale * std::exp(log_softmax_raw_[k]) -
                       (static_cast<std::int64_t>(k) == target ? hard_scale : 0.0f);
    grad_z[k] = hard + soft;
  }
}

} // namespace kibench::reference
