// The reference chain, op for op as eager PyTorch runs the seed's module
// (Liger-Kernel's HFDistillationLoss.get_batch_loss_metrics with the JSD
// distillation_loss) and as autograd runs its backward. Every op is one
// kernel from torch_ops.cu writing a fresh full-size tensor, freed where
// Python or autograd would free it; nothing is fused. The order of the
// backward follows autograd's engine: among ready nodes the most recently
// created runs first, and a gradient that reaches a tensor twice is
// accumulated in place (autograd's InputBuffer does so when it holds the
// only reference).
#include "kernels/lm_head/reference/reference_chain.hpp"

#include <cmath>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_inputs.hpp"

namespace kibench::gpu {

namespace ops = torch_ops;

namespace {

enum class Divergence { mixture, forward_kl, reverse_kl };

Divergence divergence_of(double beta) {
  if (beta == 0.0) return Divergence::forward_kl;
  if (beta == 1.0) return Divergence::reverse_kl;
  return Divergence::mixture;
}

} // namespace

void ReferenceChain::forward(const ChainIo &io, SavedTensors &saved) {
  saved.clear();
  const ChainShape &p = shape_;
  const std::int64_t T = p.tokens, V = p.vocab, n = T * V;
  const DeviceInputs *in = io.inputs;
  auto bias_of = [&](bool has,
                     const DeviceBuffer<__nv_bfloat16> DeviceInputs::*member) -> const __nv_bfloat16 * {
    return has && in != nullptr ? (in->*member).data() : nullptr;
  };

  // concatenated_forward: student_outputs = x_s @ W_s.t() (+ b_s), the
  // teacher's under no_grad, then .float() of both.
  Tensor zs = arena_.bf16(n);
  launch([&] {
    blas_->matmul(
        gemm_abt(T, V, p.student_hidden, in->student_input.data(), in->student_weight.data(), zs.bf16()),
        stream_);
  });
  if (p.student_bias) {
    Tensor biased = arena_.bf16(n);
    launch([&] {
      ops::add_bias_bf16(zs.bf16(), bias_of(true, &DeviceInputs::student_bias), biased.bf16(), T, V, stream_);
    });
    zs = std::move(biased);
  }
  Tensor zt = arena_.bf16(n);
  launch([&] {
    blas_->matmul(gemm_abt(T, V, p.hidden, in->teacher_input.data(), in->teacher_weight.data(), zt.bf16()),
                  stream_);
  });
  if (p.teacher_bias) {
    Tensor biased = arena_.bf16(n);
    launch([&] {
      ops::add_bias_bf16(zt.bf16(), bias_of(true, &DeviceInputs::teacher_bias), biased.bf16(), T, V, stream_);
    });
    zt = std::move(biased);
  }
  Tensor s = arena_.f32(n), t = arena_.f32(n);
  launch([&] {
    ops::to_float(zs.bf16(), s.f32(), n, stream_);
    ops::to_float(zt.bf16(), t.f32(), n, stream_);
  });

  // `if torch.all(target == self.ignore_index): return torch.tensor(0.0)`:
  // a device-to-host sync in eager PyTorch too.
  std::int64_t valid = 1;
  launch([&] {
    ops::count_valid(in->target.data(), T, p.ignore_index, io.scalars, stream_);
    long long host_valid = 0;
    CUDA_CHECK(cudaMemcpyAsync(&host_valid, &io.scalars->valid, sizeof(host_valid), cudaMemcpyDeviceToHost,
                               stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    valid = host_valid;
  });
  if (valid == 0) {
    saved.all_ignored = true;
    saved.valid = true;
    launch([&] { CUDA_CHECK(cudaMemsetAsync(&io.scalars->loss, 0, sizeof(float), stream_)); });
    return;
  }

  // nn.CrossEntropyLoss(ignore_index): log_softmax (saved) and nll_loss.
  saved.ce_log_probs = arena_.f32(n);
  launch([&] {
    ops::log_softmax(s.f32(), saved.ce_log_probs.f32(), T, V, stream_);
    ops::nll_loss(saved.ce_log_probs.f32(), in->target.data(), T, V, p.ignore_index, io.scalars, stream_);
  });
  zs.reset(); // concatenated_forward returns: the bf16 logits go
  zt.reset();

  // student_logits /= τ; teacher_logits /= τ (in place; ATen multiplies by
  // the fp32 reciprocal of a scalar divisor).
  const float inverse_temperature = 1.0f / static_cast<float>(p.temperature);
  launch([&] {
    ops::mul_scalar(s.f32(), inverse_temperature, s.f32(), n, stream_);
    ops::mul_scalar(t.f32(), inverse_temperature, t.f32(), n, stream_);
  });

  // distillation_loss
  saved.student_log_probs = arena_.f32(n);
  Tensor t_lp = arena_.f32(n);
  launch([&] {
    ops::log_softmax(s.f32(), saved.student_log_probs.f32(), T, V, stream_);
    ops::log_softmax(t.f32(), t_lp.f32(), T, V, stream_);
  });
  const float *s_lp = saved.student_log_probs.f32();
  Tensor per_row = arena_.f32(T); // jsd_loss.sum(dim=-1)

  switch (divergence_of(p.beta)) {
  case Divergence::mixture: {
    const auto beta = static_cast<float>(p.beta);
    // log m = logsumexp(stack([s_lp + log(1−β), t_lp + log β]), dim=0)
    {
      Tensor a = arena_.f32(n), b = arena_.f32(n);
      launch([&] {
        ops::add_scalar(s_lp, static_cast<float>(std::log(1.0 - p.beta)), a.f32(), n, stream_);
        ops::add_scalar(t_lp.f32(), static_cast<float>(std::log(p.beta)), b.f32(), n, stream_);
      });
      saved.stacked = arena_.f32(2 * n);
      launch([&] {
        const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
        CUDA_CHECK(cudaMemcpyAsync(saved.stacked.f32(), a.f32(), bytes, cudaMemcpyDeviceToDevice, stream_));
        CUDA_CHECK(
            cudaMemcpyAsync(saved.stacked.f32() + n, b.f32(), bytes, cudaMemcpyDeviceToDevice, stream_));
      });
    }
    const float *st = saved.stacked.f32();
    {
      // ATen's logsumexp: maxes = amax; maxes[|maxes| == inf] = 0;
      // sum((x − maxes).exp_()).log_().add_(maxes)
      Tensor maxes = arena_.f32(n);
      launch([&] { ops::maximum(st, st + n, maxes.f32(), n, stream_); });
      {
        Tensor absolute = arena_.f32(n);
        launch([&] { ops::abs(maxes.f32(), absolute.f32(), n, stream_); });
        Tensor infinite = arena_.boolean(n);
        launch([&] { ops::eq_infinity(absolute.f32(), infinite.boolean(), n, stream_); });
        absolute.reset();
        launch([&] { ops::masked_fill_zero(maxes.f32(), infinite.boolean(), n, stream_); });
      }
      Tensor shifted = arena_.f32(2 * n);
      launch([&] {
        ops::sub_planes(st, maxes.f32(), shifted.f32(), 2, n, stream_);
        ops::exp(shifted.f32(), shifted.f32(), 2 * n, stream_);
      });
      saved.log_mean = arena_.f32(n);
      launch([&] { ops::add(shifted.f32(), shifted.f32() + n, saved.log_mean.f32(), n, stream_); });
      shifted.reset();
      launch([&] {
        ops::log(saved.log_mean.f32(), saved.log_mean.f32(), n, stream_);
        ops::add(saved.log_mean.f32(), maxes.f32(), saved.log_mean.f32(), n, stream_);
      });
    }
    const float *lmp = saved.log_mean.f32();
    // student_kl = kl_div(lmp, s_lp, log_target) = exp(s_lp) * (s_lp − lmp)
    saved.student_exp = arena_.f32(n);
    saved.student_minus = arena_.f32(n);
    Tensor student_kl = arena_.f32(n);
    launch([&] {
      ops::exp(s_lp, saved.student_exp.f32(), n, stream_);
      ops::sub(s_lp, lmp, saved.student_minus.f32(), n, stream_);
      ops::mul(saved.student_exp.f32(), saved.student_minus.f32(), student_kl.f32(), n, stream_);
    });
    // teacher_kl = exp(t_lp) * (t_lp − lmp)
    saved.teacher_exp = arena_.f32(n);
    Tensor teacher_kl = arena_.f32(n);
    {
      Tensor difference = arena_.f32(n);
      launch([&] {
        ops::exp(t_lp.f32(), saved.teacher_exp.f32(), n, stream_);
        ops::sub(t_lp.f32(), lmp, difference.f32(), n, stream_);
      });
      launch([&] { ops::mul(saved.teacher_exp.f32(), difference.f32(), teacher_kl.f32(), n, stream_); });
    }
    // jsd = β * teacher_kl + (1 − β) * student_kl, then .sum(dim=-1)
    {
      Tensor u = arena_.f32(n), v = arena_.f32(n);
      launch([&] {
        ops::mul_scalar(teacher_kl.f32(), beta, u.f32(), n, stream_);
        ops::mul_scalar(student_kl.f32(), static_cast<float>(1.0 - p.beta), v.f32(), n, stream_);
      });
      Tensor jsd = arena_.f32(n);
      launch([&] { ops::add(u.f32(), v.f32(), jsd.f32(), n, stream_); });
      u.reset();
      v.reset();
      launch([&] { ops::row_sum(jsd.f32(), per_row.f32(), T, V, stream_); });
    }
    break;
  }
  case Divergence::forward_kl: {
    // kl_div(s_lp, t_lp, log_target) = exp(t_lp) * (t_lp − s_lp)
    saved.teacher_exp = arena_.f32(n);
    Tensor difference = arena_.f32(n);
    launch([&] {
      ops::exp(t_lp.f32(), saved.teacher_exp.f32(), n, stream_);
      ops::sub(t_lp.f32(), s_lp, difference.f32(), n, stream_);
    });
    Tensor jsd = arena_.f32(n);
    launch([&] { ops::mul(saved.teacher_exp.f32(), difference.f32(), jsd.f32(), n, stream_); });
    difference.reset();
    launch([&] { ops::row_sum(jsd.f32(), per_row.f32(), T, V, stream_); });
    break;
  }
  case Divergence::reverse_kl: {
    // kl_div(t_lp, s_lp, log_target) = exp(s_lp) * (s_lp − t_lp)
    saved.student_exp = arena_.f32(n);
    saved.student_minus = arena_.f32(n);
    launch([&] {
      ops::exp(s_lp, saved.student_exp.f32(), n, stream_);
      ops::sub(s_lp, t_lp.f32(), saved.student_minus.f32(), n, stream_);
    });
    Tensor jsd = arena_.f32(n);
    launch([&] {
      ops::mul(saved.student_exp.f32(), saved.student_minus.f32(), jsd.f32(), n, stream_);
      ops::row_sum(jsd.f32(), per_row.f32(), T, V, stream_);
    });
    break;
  }
  }
  // (jsd * mask.float()).sum() / mask.sum().clamp_min(1); then
  // loss = w_h * hard_loss + w_s * soft_loss
  launch([&] {
    ops::masked_mean_and_loss(per_row.f32(), in->target.data(), T, p.ignore_index,
                              static_cast<float>(p.weight_hard), static_cast<float>(p.weight_soft),
                              io.scalars, stream_);
  });
  saved.valid = true;
  // Leaving scope frees what Python drops on return: t_lp, the kl terms,
  // and student_logits / teacher_logits.
}

void ReferenceChain::backward(const ChainIo &io, SavedTensors &saved) {
  const ChainShape &p = shape_;
  const std::int64_t T = p.tokens, V = p.vocab, Hs = p.student_hidden, n = T * V;
  const DeviceInputs *in = io.inputs;
  if (saved.all_ignored) {
    // loss-math.md: with every target ignored the gradients are zero.
    launch([&] {
      CUDA_CHECK(cudaMemsetAsync(io.grad_student_input, 0, static_cast<std::size_t>(T * Hs) * 2, stream_));
      CUDA_CHECK(cudaMemsetAsync(io.grad_student_weight, 0, static_cast<std::size_t>(V * Hs) * 2, stream_));
      if (io.grad_student_bias != nullptr)
        CUDA_CHECK(cudaMemsetAsync(io.grad_student_bias, 0, static_cast<std::size_t>(V) * 2, stream_));
    });
    saved.clear();
    return;
  }
  const std::int64_t *target = in != nullptr ? in->target.data() : nullptr;

  // loss → w_s·soft → / N → sum → * mask: grad of each row's J.
  Tensor grad_row = arena_.f32(T);
  launch([&] {
    ops::masked_mean_backward(target, T, p.ignore_index, static_cast<float>(p.weight_soft), io.scalars,
                              grad_row.f32(), stream_);
  });

  Tensor grad_slp; // gradient reaching log_softmax(z_s / τ)'s output
  const float *s_lp = saved.student_log_probs.f32();
  switch (divergence_of(p.beta)) {
  case Divergence::mixture: {
    // (1−β)·student_kl was created last: its branch runs first.
    Tensor grad_skl = arena_.f32(n);
    launch([&] {
      ops::expand_rows(grad_row.f32(), static_cast<float>(1.0 - p.beta), grad_skl.f32(), T, V, stream_);
    });
    Tensor grad_lmp;
    {
      Tensor grad_tkl = arena_.f32(n);
      launch([&] {
        ops::expand_rows(grad_row.f32(), static_cast<float>(p.beta), grad_tkl.f32(), T, V, stream_);
      });
      Tensor grad_dt = arena_.f32(n); // teacher_kl = e_t * (t_lp − lmp)
      launch([&] { ops::mul(grad_tkl.f32(), saved.teacher_exp.f32(), grad_dt.f32(), n, stream_); });
      grad_tkl.reset();
      saved.teacher_exp.reset();
      grad_lmp = arena_.f32(n);
      launch([&] { ops::neg(grad_dt.f32(), grad_lmp.f32(), n, stream_); });
    }
    // student_kl = e_s * d_s: both factors get a gradient.
    Tensor grad_es = arena_.f32(n), grad_ds = arena_.f32(n);
    launch([&] {
      ops::mul(grad_skl.f32(), saved.student_minus.f32(), grad_es.f32(), n, stream_);
      ops::mul(grad_skl.f32(), saved.student_exp.f32(), grad_ds.f32(), n, stream_);
    });
    grad_skl.reset();
    saved.student_minus.reset();
    {
      // d_s = s_lp − lmp: s_lp gets grad_ds itself, lmp its negation.
      Tensor negated = arena_.f32(n);
      launch([&] {
        ops::neg(grad_ds.f32(), negated.f32(), n, stream_);
        ops::add(grad_lmp.f32(), negated.f32(), grad_lmp.f32(), n, stream_);
      });
    }
    grad_slp = std::move(grad_ds);
    {
      // e_s = exp(s_lp): grad · result
      Tensor through_exp = arena_.f32(n);
      launch([&] { ops::mul(grad_es.f32(), saved.student_exp.f32(), through_exp.f32(), n, stream_); });
      grad_es.reset();
      saved.student_exp.reset();
      launch([&] { ops::add(grad_slp.f32(), through_exp.f32(), grad_slp.f32(), n, stream_); });
    }
    {
      // logsumexp backward: grad · (self − result).exp(), over both planes;
      // stack's backward hands plane 0 to s_lp + log(1−β), then to s_lp.
      Tensor shifted = arena_.f32(2 * n);
      launch(
          [&] { ops::sub_planes(saved.stacked.f32(), saved.log_mean.f32(), shifted.f32(), 2, n, stream_); });
      Tensor exponent = arena_.f32(2 * n);
      launch([&] { ops::exp(shifted.f32(), exponent.f32(), 2 * n, stream_); });
      shifted.reset();
      Tensor grad_stacked = arena_.f32(2 * n);
      launch([&] { ops::mul_planes(grad_lmp.f32(), exponent.f32(), grad_stacked.f32(), 2, n, stream_); });
      exponent.reset();
      grad_lmp.reset();
      saved.stacked.reset();
      saved.log_mean.reset();
      launch([&] { ops::add(grad_slp.f32(), grad_stacked.f32(), grad_slp.f32(), n, stream_); });
    }
    break;
  }
  case Divergence::forward_kl: {
    // jsd = e_t * (t_lp − s_lp): grad(expanded) · e_t, negated for s_lp.
    Tensor grad_difference = arena_.f32(n);
    launch([&] {
      ops::mul_rows(grad_row.f32(), saved.teacher_exp.f32(), grad_difference.f32(), T, V, stream_);
    });
    saved.teacher_exp.reset();
    grad_slp = arena_.f32(n);
    launch([&] { ops::neg(grad_difference.f32(), grad_slp.f32(), n, stream_); });
    break;
  }
  case Divergence::reverse_kl: {
    // jsd = e_s * (s_lp − t_lp)
    Tensor grad_es = arena_.f32(n), grad_difference = arena_.f32(n);
    launch([&] {
      ops::mul_rows(grad_row.f32(), saved.student_minus.f32(), grad_es.f32(), T, V, stream_);
      ops::mul_rows(grad_row.f32(), saved.student_exp.f32(), grad_difference.f32(), T, V, stream_);
    });
    saved.student_minus.reset();
    grad_slp = std::move(grad_difference);
    Tensor through_exp = arena_.f32(n);
    launch([&] { ops::mul(grad_es.f32(), saved.student_exp.f32(), through_exp.f32(), n, stream_); });
    grad_es.reset();
    saved.student_exp.reset();
    launch([&] { ops::add(grad_slp.f32(), through_exp.f32(), grad_slp.f32(), n, stream_); });
    break;
  }
  }
  grad_row.reset();

  // log_softmax backward, then the in-place division's backward (· 1/τ).
  Tensor grad_scaled = arena_.f32(n);
  launch([&] { ops::log_softmax_backward(grad_slp.f32(), s_lp, grad_scaled.f32(), T, V, stream_); });
  grad_slp.reset();
  saved.student_log_probs.reset();
  Tensor grad_logits = arena_.f32(n);
  launch([&] {
    ops::mul_scalar(grad_scaled.f32(), 1.0f / static_cast<float>(p.temperature), grad_logits.f32(), n,
                    stream_);
  });
  grad_scaled.reset();

  // The cross-entropy branch: nll_loss backward (zeros + scatter), then its
  // log_softmax backward; accumulated into the logits' gradient.
  {
    Tensor grad_ce = arena_.f32(n);
    launch([&] {
      ops::nll_loss_backward(target, static_cast<float>(p.weight_hard), T, V, p.ignore_index, io.scalars,
                             grad_ce.f32(), stream_);
    });
    Tensor grad_from_ce = arena_.f32(n);
    launch([&] {
      ops::log_softmax_backward(grad_ce.f32(), saved.ce_log_probs.f32(), grad_from_ce.f32(), T, V, stream_);
    });
    grad_ce.reset();
    saved.ce_log_probs.reset();
    launch([&] { ops::add(grad_logits.f32(), grad_from_ce.f32(), grad_logits.f32(), n, stream_); });
  }

  // .float()'s backward rounds G to bf16; then the bias and the GEMMs.
  Tensor g = arena_.bf16(n);
  launch([&] { ops::to_bfloat16(grad_logits.f32(), g.bf16(), n, stream_); });
  grad_logits.reset();
  launch([&] {
    if (io.grad_student_bias != nullptr) ops::column_sum_bf16(g.bf16(), io.grad_student_bias, T, V, stream_);
    // grad x_s = G · W_s;  grad W_s = Gᵀ · x_s
    blas_->matmul(gemm_ab(T, Hs, V, g.bf16(), in->student_weight.data(), io.grad_student_input), stream_);
    blas_->matmul(gemm_atb(V, Hs, T, g.bf16(), in->student_input.data(), io.grad_student_weight), stream_);
  });
  saved.clear();
}

std::uint64_t ReferenceChain::predicted_peak_bytes(const ChainShape &shape, bool with_backward) {
  TensorArena counter(nullptr);
  ReferenceChain chain(shape, counter, nullptr, nullptr);
  SavedTensors saved;
  const ChainIo io{};
  chain.forward(io, saved);
  if (with_backward) chain.backward(io, saved);
  return counter.peak_bytes();
}

} // namespace kibench::gpu
