// cpu-reference: the torch-equivalent reference chain (docs/loss-math.md,
// "Reference semantics") mirrored on the CPU, so its error against the fp64
// oracle can be seen without a GPU. What it reproduces, step by step:
//
//   forward   z = bf16(x W^T (+ b))       bf16 GEMM: fp32 accumulate, bf16 out
//             z.float()                   both [T, V] logit matrices in fp32
//             CE = -log_softmax(z_s)[y]   mean over valid tokens
//             s = z_s / tau, t = z_t / tau; lq = log_softmax(s), lp = log_softmax(t)
//             lm = logsumexp(stack(lq + log(1-beta), lp + log(beta)))
//             J = beta * kl_div(lm, lp) + (1-beta) * kl_div(lm, lq)   (beta = 0, 1:
//                 kl_div(lq, lp), kl_div(lp, lq)), summed over vocab, masked, / N
//   backward  autograd through the same fp32 ops; the fp32 logit gradient is
//             rounded to bf16 by .float()'s backward; the grad GEMMs
//             accumulate in fp32 and round their outputs to bf16.
//
// Every value that torch holds in fp32 is a float here, every bf16 tensor is
// rounded (round to nearest even) where torch would round it. The per-row
// fp32 chain lives in kernels/lm_head/reference/host_reference_chain.hpp; this file adds the GEMMs,
// the roundings and the Implementation. Reductions run in a fixed order per
// output element, so results do not depend on thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/cpu/host_implementation.hpp"
#include "kernels/operation_switch.hpp"
#include "kernels/lm_head/reference/host_reference_chain.hpp"
#include "lib/inputs/bf16.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/parallel/parallel_for.hpp"
#include "lib/operations/registry.hpp"

namespace kibench {
namespace {

constexpr std::int64_t kRowTile = 8;

std::size_t at(std::int64_t row, std::int64_t columns, std::int64_t column = 0) {
  return static_cast<std::size_t>(row * columns + column);
}

std::vector<float> widen(const std::vector<std::uint16_t> &bits) {
  std::vector<float> values(bits.size());
  std::transform(bits.begin(), bits.end(), values.begin(), bf16::to_float);
  return values;
}

std::vector<std::uint16_t> narrow(const std::vector<float> &values) {
  std::vector<std::uint16_t> bits(values.size());
  std::transform(values.begin(), values.end(), bits.begin(), bf16::from_float);
  return bits;
}

// fp32 dot product with eight running sums, as a GEMM's fp32 accumulators
// would hold partial sums (the exact order of cuBLAS's is not reproducible).
float dot(const float *a, const float *b, std::int64_t n) {
  float s[8] = {};
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) s[j] += a[k + j] * b[k + j];
  for (; k < n; ++k) s[0] += a[k] * b[k];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// out[i, v] = bf16(fp32(x[i, :] . w[v, :]) + b[v]), kept as the float it widens to.
void bf16_linear(const std::vector<float> &x, const std::vector<float> &w, const std::vector<float> &bias,
                 std::int64_t rows, std::int64_t vocab, std::int64_t width, std::vector<float> &out) {
  out.assign(static_cast<std::size_t>(rows * vocab), 0.0f);
  parallel_for(0, rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
      const std::int64_t tile_end = std::min(end, tile + kRowTile);
      for (std::int64_t v = 0; v < vocab; ++v) {
        const float *weight_row = &w[at(v, width)];
        const float b = bias.empty() ? 0.0f : bias[static_cast<std::size_t>(v)];
        for (std::int64_t i = tile; i < tile_end; ++i)
          out[at(i, vocab, v)] = bf16::round_to_bf16(dot(&x[at(i, width)], weight_row, width) + b);
      }
    }
  });
}

TensorRef host_view(const std::vector<std::uint16_t> &values) {
  return TensorRef{values.data(), ElementType::bf16, static_cast<std::int64_t>(values.size()), false};
}

template <class T> std::uint64_t bytes_of(const std::vector<T> &values) {
  return sizeof(T) * std::uint64_t{values.size()};
}

// distill_jsd_loss, and fused_linear_jsd through the same chain with w_h = 0
// (the cross-entropy is computed and weighted by 0, as an eager harness
// that kept the hard term would).
class CpuReference final : public cpu::HostImplementation {
public:
  explicit CpuReference(OperationKind kind) : HostImplementation("cpu-reference"), kind_(kind) {}

  [[nodiscard]] RevisionFacts revision() const override {
    return host_revision({
        .name = "cpu-reference",
        .title = fmt::format("kibench CPU mirror of the torch-equivalent reference{}", kind_->shared_code_title()),
        .description = "bf16 logit GEMMs with fp32 accumulation, the loss op by op in fp32 as PyTorch "
                       "eager computes it, bf16 gradients; on the CPU.",
        .source_path = "kernels/lm_head/reference/cpu_reference.cpp",
        .symbol = "kibench::make_cpu_reference",
        .operation = kind_,
    });
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    const HostInputs &host = inputs.host();
    input_bytes_ = cpu::host_input_bytes(host);
    tokens_ = workload.tokens;
    vocab_ = workload.vocab;
    hidden_ = workload.hidden;
    student_hidden_ = workload.student_hidden;
    scalars_ = workload.scalars;
    if (scalars_.temperature == 0.0 || scalars_.beta < 0.0 || scalars_.beta > 1.0)
      throw std::invalid_argument("cpu-reference: temperature must be nonzero and beta in [0, 1]");
    // Widening bf16 to float is exact; done once so the GEMMs read floats.
    student_input_ = widen(host.student_input);
    student_weight_ = widen(host.student_weight);
    teacher_input_ = widen(host.teacher_input);
    teacher_weight_ = widen(host.teacher_weight);
    student_bias_ = widen(host.student_bias);
    teacher_bias_ = widen(host.teacher_bias);
    target_ = host.target;
    for (std::int64_t y : target_)
      if (y != scalars_.ignore_index && (y < 0 || y >= vocab_))
        throw std::invalid_argument("cpu-reference: a target lies outside [0, V) and is not ignore_index");
    const auto T = static_cast<std::size_t>(tokens_), V = static_cast<std::size_t>(vocab_);
    const auto Hs = static_cast<std::size_t>(student_hidden_);
    grad_student_input_.assign(T * Hs, 0);
    grad_student_weight_.assign(V * Hs, 0);
    if (!student_bias_.empty()) grad_student_bias_.assign(V, 0);
    prepared_ = true;
    poison_outputs();
  }

  void before_sample(Pass pass) override {
    if (pass == Pass::backward && !forward_done_) forward();
  }

  void poison_outputs() override {
    loss_ = std::numeric_limits<double>::quiet_NaN();
    const std::uint16_t nan_bits = bf16::from_float(std::numeric_limits<float>::quiet_NaN());
    for (auto *values : {&grad_student_input_, &grad_student_weight_, &grad_student_bias_})
      std::fill(values->begin(), values->end(), nan_bits);
  }

  void run(Pass pass) override {
    if (!prepared_) throw std::logic_error("cpu-reference: run() before prepare()");
    if (pass != Pass::backward || !forward_done_) forward();
    has_gradients_ = pass != Pass::forward;
    if (has_gradients_) backward();
    loss_ = static_cast<double>(forward_loss_);
  }

  OutputView outputs() override {
    OutputView view;
    view.loss = loss_;
    if (has_gradients_) {
      view.grad_student_input = host_view(grad_student_input_);
      view.grad_student_weight = host_view(grad_student_weight_);
      view.grad_student_bias = host_view(grad_student_bias_);
    }
    return view;
  }

  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    use.input_bytes = input_bytes_;
    use.output_bytes =
        4 + bytes_of(grad_student_input_) + bytes_of(grad_student_weight_) + bytes_of(grad_student_bias_);
    use.workspace_bytes = bytes_of(student_input_) + bytes_of(student_weight_) + bytes_of(teacher_input_) +
                          bytes_of(teacher_weight_) + bytes_of(student_bias_) + bytes_of(teacher_bias_) +
                          bytes_of(target_) + bytes_of(student_logits_) + bytes_of(teacher_logits_) +
                          bytes_of(grad_logits_);
    // The grad GEMMs' fp32 accumulators exist only while the backward runs.
    const std::uint64_t accumulators = 4 * (std::uint64_t{grad_student_input_.size()} +
                                            grad_student_weight_.size() + grad_student_bias_.size());
    use.peak_bytes = use.input_bytes + use.output_bytes + use.workspace_bytes + accumulators;
    return use;
  }

  void release() override {
    for (auto *values : {&student_input_, &student_weight_, &teacher_input_, &teacher_weight_, &student_bias_,
                         &teacher_bias_, &student_logits_, &teacher_logits_, &grad_logits_})
      std::vector<float>().swap(*values);
    for (auto *values : {&grad_student_input_, &grad_student_weight_, &grad_student_bias_})
      std::vector<std::uint16_t>().swap(*values);
    std::vector<std::int64_t>().swap(target_);
    input_bytes_ = 0;
    loss_ = std::numeric_limits<double>::quiet_NaN();
    prepared_ = forward_done_ = has_gradients_ = false;
  }

private:
  // Floats held besides the inputs: widened inputs, two [T, V] logit
  // matrices and the [T, V] logit gradient, the gradients and their fp32
  // accumulators.
  [[nodiscard]] std::uint64_t planned_own_bytes(const Workload &w) const override {
    const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
    const auto H = static_cast<std::uint64_t>(w.hidden), Hs = static_cast<std::uint64_t>(w.student_hidden);
    const std::uint64_t widened = T * Hs + V * Hs + T * H + V * H + 2 * V;
    const std::uint64_t gradients = T * Hs + V * Hs + V;
    return 4 * (widened + 3 * T * V) + 8 * T + (2 + 4) * gradients;
  }

  [[nodiscard]] bool is_valid(std::int64_t row) const {
    return target_[static_cast<std::size_t>(row)] != scalars_.ignore_index;
  }

  [[nodiscard]] float valid_count() const {
    std::int64_t valid = 0;
    for (std::int64_t i = 0; i < tokens_; ++i) valid += is_valid(i) ? 1 : 0;
    return static_cast<float>(std::max<std::int64_t>(1, valid));
  }

  [[nodiscard]] std::span<const float> logits_row(const std::vector<float> &logits, std::int64_t row) const {
    return {&logits[at(row, vocab_)], static_cast<std::size_t>(vocab_)};
  }

  void forward() {
    bf16_linear(student_input_, student_weight_, student_bias_, tokens_, vocab_, student_hidden_,
                student_logits_);
    bf16_linear(teacher_input_, teacher_weight_, teacher_bias_, tokens_, vocab_, hidden_, teacher_logits_);
    std::vector<reference::RowLoss> rows(static_cast<std::size_t>(tokens_));
    parallel_for(0, tokens_, [&](std::int64_t begin, std::int64_t end) {
      reference::RowChain chain(vocab_, scalars_);
      for (std::int64_t i = begin; i < end; ++i)
        if (is_valid(i))
          rows[static_cast<std::size_t>(i)] =
              chain.forward(logits_row(student_logits_, i), logits_row(teacher_logits_, i),
                            target_[static_cast<std::size_t>(i)]);
    });
    // Masked sums over tokens, then the means and the weighted sum, in fp32.
    const reference::ChainScalars s(scalars_);
    float hard_sum = 0.0f, soft_sum = 0.0f;
    for (const reference::RowLoss &row : rows) {
      hard_sum += row.cross_entropy;
      soft_sum += row.jsd;
    }
    const float n = valid_count();
    forward_loss_ = s.weight_hard * (hard_sum / n) + s.weight_soft * (soft_sum / n);
    forward_done_ = true;
  }

  void backward() {
    const std::int64_t T = tokens_, V = vocab_, Hs = student_hidden_;
    const reference::ChainScalars s(scalars_);
    const float n = valid_count();
    const float hard_scale = s.weight_hard / n, soft_scale = s.weight_soft / n;

    // The bf16 gradient of the logits (widened to float), zero on ignored rows.
    grad_logits_.assign(static_cast<std::size_t>(T * V), 0.0f);
    parallel_for(0, T, [&](std::int64_t begin, std::int64_t end) {
      reference::RowChain chain(V, scalars_);
      for (std::int64_t i = begin; i < end; ++i) {
        if (!is_valid(i)) continue;
        const std::int64_t y = target_[static_cast<std::size_t>(i)];
        const std::span<float> grad_row(&grad_logits_[at(i, V)], static_cast<std::size_t>(V));
        chain.forward(logits_row(student_logits_, i), logits_row(teacher_logits_, i), y);
        chain.backward(y, hard_scale, soft_scale, grad_row);
        // .float()'s backward hands the matmul a bf16 gradient.
        for (float &g : grad_row) g = bf16::round_to_bf16(g);
      }
    });

    // grad x_s = bf16(G W_s): fp32 accumulators, v ascending.
    std::vector<float> accumulate(static_cast<std::size_t>(T * Hs), 0.0f);
    parallel_for(0, T, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
        const std::int64_t tile_end = std::min(end, tile + kRowTile);
        for (std::int64_t v = 0; v < V; ++v) {
          const float *weight_row = &student_weight_[at(v, Hs)];
          for (std::int64_t i = tile; i < tile_end; ++i) {
            const float g = grad_logits_[at(i, V, v)];
            if (g == 0.0f) continue;
            float *out = &accumulate[at(i, Hs)];
            for (std::int64_t h = 0; h < Hs; ++h) out[h] += g * weight_row[h];
          }
        }
      }
    });
    grad_student_input_ = narrow(accumulate);

    // grad W_s = bf16(G^T x_s) and grad b_s = bf16(sum_i G[i]): i ascending.
    const bool has_bias = !student_bias_.empty();
    accumulate.assign(static_cast<std::size_t>(V * Hs), 0.0f);
    std::vector<float> bias_accumulate(has_bias ? static_cast<std::size_t>(V) : 0, 0.0f);
    parallel_for(0, V, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t tile = begin; tile < end; tile += kRowTile) {
        const std::int64_t tile_end = std::min(end, tile + kRowTile);
        for (std::int64_t i = 0; i < T; ++i) {
          const float *input_row = &student_input_[at(i, Hs)];
          for (std::int64_t v = tile; v < tile_end; ++v) {
            const float g = grad_logits_[at(i, V, v)];
            if (g == 0.0f) continue;
            if (has_bias) bias_accumulate[static_cast<std::size_t>(v)] += g;
            float *out = &accumulate[at(v, Hs)];
            for (std::int64_t h = 0; h < Hs; ++h) out[h] += g * input_row[h];
          }
        }
      }
    });
    grad_student_weight_ = narrow(accumulate);
    grad_student_bias_ = narrow(bias_accumulate);
  }

  OperationKind kind_;
  std::int64_t tokens_ = 0, vocab_ = 0, hidden_ = 0, student_hidden_ = 0;
  LossScalars scalars_;
  std::vector<float> student_input_, student_weight_, teacher_input_, teacher_weight_;
  std::vector<float> student_bias_, teacher_bias_;
  std::vector<std::int64_t> target_;
  std::vector<float> student_logits_, teacher_logits_, grad_logits_;
  std::vector<std::uint16_t> grad_student_input_, grad_student_weight_, grad_student_bias_;
  std::uint64_t input_bytes_ = 0;
  double loss_ = std::numeric_limits<double>::quiet_NaN();
  float forward_loss_ = 0.0f;
  bool prepared_ = false, forward_done_ = false, has_gradients_ = false;
};

} // namespace

std::unique_ptr<Implementation> make_cpu_reference() {
  std::map<OperationKind, std::unique_ptr<Implementation>> parts;
  for (const std::string_view lm_heads : {"distill_jsd_loss", "fused_linear_jsd"})
    parts.emplace(operation_named(lm_heads), std::make_unique<CpuReference>(operation_named(lm_heads)));
  parts.emplace(operation_named("jsd"), make_cpu_jsd_reference());
  return make_operation_switch("cpu-reference", std::move(parts));
}

} // namespace kibench
