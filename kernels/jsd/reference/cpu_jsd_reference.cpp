// cpu-reference on jsd: PyTorch eager's op sequence for jsd (the `torch`
// provider of Liger's benchmark_jsd.py and the JSD of its tests) mirrored in
// fp32 on the CPU, so its error against the fp64 oracle can be seen:
//
//   forward   q = exp(log_q), p = exp(log_p)                     [T, V] fp32
//             0 < beta < 1: m = lerp(q, p, beta), lm = log(m)
//                 J = beta * kl_div(lm, log_p).sum(-1) + (1 - beta) * kl_div(lm, log_q).sum(-1)
//             beta = 0: J = kl_div(log_q, log_p).sum(-1); beta = 1: kl_div(log_p, log_q).sum(-1)
//             loss = (where(label != ignore, J, 0) / N).sum()
//   backward  autograd through the same ops in fp32: kl_div(input, target,
//             log_target) = exp(target) (target - input) differentiated in
//             both arguments, log, lerp (d/dstart = 1 - weight) and exp.
//
// Sums over the vocabulary run in column order, the mean over tokens in row
// order; results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/jsd/jsd_host_implementation.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/parallel/parallel_for.hpp"
#include "lib/operations/registry.hpp"

namespace kibench {
namespace {

// torch.lerp(start, end, weight) in fp32: start + weight * (end - start)
// for weight < 0.5, else end - (end - start) * (1 - weight).
float lerp(float start, float end, float weight) {
  return weight < 0.5f ? start + weight * (end - start) : end - (end - start) * (1.0f - weight);
}

class CpuJsdReference final : public cpu::JsdHostImplementation<float> {
public:
  CpuJsdReference() : JsdHostImplementation("cpu-reference") {}

  [[nodiscard]] RevisionFacts revision() const override {
    return host_revision({
        .name = "cpu-reference",
        .title = "kibench CPU mirror of the torch-equivalent reference (jsd)",
        .description = "PyTorch eager's jsd op sequence (exp, lerp, log, kl_div, sum, masked mean) and its "
                       "autograd backward, in fp32 on the CPU.",
        .source_path = "kernels/jsd/reference/cpu_jsd_reference.cpp",
        .symbol = "kibench::make_cpu_reference",
        .operation = operation_named("jsd"),
    });
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    const HostInputs &host = inputs.host();
    input_bytes_ = cpu::host_input_bytes(host);
    tokens_ = workload.tokens;
    vocab_ = workload.vocab;
    beta_ = static_cast<float>(workload.scalars.beta);
    if (!(beta_ >= 0.0f && beta_ <= 1.0f))
      throw std::invalid_argument("cpu-reference: beta must lie in [0, 1]");
    ignore_index_ = workload.scalars.ignore_index;
    log_q_ = &host.student_log_probs;
    log_p_ = &host.teacher_log_probs;
    target_ = &host.target;
    if (log_q_->size() != static_cast<std::size_t>(tokens_ * vocab_) || log_p_->size() != log_q_->size())
      throw std::invalid_argument("cpu-reference: jsd inputs are not [T, V]");
    allocate_outputs(log_q_->size());
    rows_.assign(static_cast<std::size_t>(tokens_), 0.0f);
    prepared_ = true;
  }

  void run(Pass pass) override {
    if (!prepared_) throw std::logic_error("cpu-reference: run() before prepare()");
    has_gradient_ = pass != Pass::forward;
    std::int64_t valid = 0;
    for (const std::int64_t y : *target_) valid += y != ignore_index_ ? 1 : 0;
    // n_non_ignore == 0: the loss is 0 and nothing flows back.
    const float count = static_cast<float>(std::max<std::int64_t>(1, valid));
    const float scale = valid == 0 ? 0.0f : 1.0f / count;
    parallel_for(0, tokens_, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) forward_and_backward_row(i, count, scale);
    });
    float loss = 0.0f;
    for (const float row : rows_) loss += row;
    loss_ = static_cast<double>(loss);
  }

  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    use.input_bytes = input_bytes_;
    use.output_bytes = 4 + 4 * std::uint64_t{gradient_.size()};
    use.workspace_bytes = 4 * std::uint64_t{rows_.size()};
    use.peak_bytes = use.input_bytes + use.output_bytes + use.workspace_bytes;
    return use;
  }

  void release() override {
    std::vector<float>().swap(rows_);
    log_q_ = log_p_ = nullptr;
    target_ = nullptr;
    release_outputs();
  }

private:
  // The [T, V] gradient and the per-row losses (torch would also hold its
  // [T, V] intermediates; this mirror works row by row).
  [[nodiscard]] std::uint64_t planned_own_bytes(const Workload &w) const override {
    const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
    return 4 * (T * V + T);
  }

  // Row i's masked loss / N into rows_[i] and (if asked) its gradient,
  // whose upstream gradient is scale = 1/N (0 when no token counts).
  void forward_and_backward_row(std::int64_t i, float count, float scale) {
    const auto first = static_cast<std::size_t>(i * vocab_);
    const bool valid = (*target_)[static_cast<std::size_t>(i)] != ignore_index_;
    const float b = beta_;
    float sum = 0.0f, teacher_sum = 0.0f, student_sum = 0.0f;
    for (std::int64_t k = 0; k < vocab_; ++k) {
      const std::size_t at = first + static_cast<std::size_t>(k);
      const float lq = (*log_q_)[at], lp = (*log_p_)[at];
      const float q = std::exp(lq), p = std::exp(lp);
      float grad = 0.0f;
      if (b == 0.0f) { // kl_div(log_q, log_p) = p (log_p - log_q)
        sum += p * (lp - lq);
        grad = -p * scale;
      } else if (b == 1.0f) { // kl_div(log_p, log_q) = q (log_q - log_p)
        const float term = q * (lq - lp);
        sum += term;
        grad = (term + q) * scale;
      } else {
        const float m = lerp(q, p, b);
        const float lm = std::log(m);
        teacher_sum += p * (lp - lm);
        student_sum += q * (lq - lm);
        // Autograd: d/dlm of both kl_divs, through log and lerp to q, then
        // exp; plus kl_div's own derivative in its target log_q.
        const float grad_lm = -(b * scale) * p - ((1.0f - b) * scale) * q;
        const float grad_q = (grad_lm / m) * (1.0f - b);
        grad = q * grad_q + ((1.0f - b) * scale) * (q * (lq - lm) + q);
      }
      if (has_gradient_) gradient_[at] = valid ? grad : 0.0f;
    }
    if (b != 0.0f && b != 1.0f) sum = b * teacher_sum + (1.0f - b) * student_sum;
    rows_[static_cast<std::size_t>(i)] = valid ? sum / count : 0.0f;
  }

  const std::vector<float> *log_q_ = nullptr;
  const std::vector<float> *log_p_ = nullptr;
  const std::vector<std::int64_t> *target_ = nullptr;
  std::vector<float> rows_;
  std::int64_t tokens_ = 0, vocab_ = 0, ignore_index_ = -100;
  float beta_ = 0.5f;
};

} // namespace

std::unique_ptr<Implementation> make_cpu_jsd_reference() {
  return std::make_unique<CpuJsdReference>();
}

} // namespace kibench
