#include "kernels/jsd/jsd_implementations.hpp"

#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/common/token_count.hpp"
#include "kernels/jsd/jsd_kernels.hpp"
#include "kernels/jsd/jsd_passes.hpp"
#include "kernels/jsd/reference/jsd_torch_ops.hpp"
#include "lib/operations/registry.hpp"

namespace kibench {
namespace gpu {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::uint64_t cells(const Workload &w) {
  return static_cast<std::uint64_t>(w.tokens) * static_cast<std::uint64_t>(w.vocab);
}

// What every GPU jsd implementation shares: the workload check, the count
// of valid rows on the device, and the row arguments.
class JsdImplementation : public GpuImplementation {
public:
  [[nodiscard]] bool runs(OperationKind kind) const override { return computes_one_of(kind, {"jsd"}); }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    if (!gpu_available()) return fmt::format("no GPU: {}", gpu_availability().reason);
    if (!runs(w.operation_kind)) return fmt::format("{} here computes jsd only", name());
    if (w.dtype != FloatType::fp32) return fmt::format("{} computes fp32 log-probabilities", name());
    return device_fit(name(), w.input_bytes() + own_bytes(w));
  }
  [[nodiscard]] std::optional<std::string> unsupported_for(const Workload &w, Pass pass) const override {
    if (auto refusal = jsd_pass_refusal(pass)) return refusal;
    return unsupported(w);
  }

protected:
  explicit JsdImplementation(std::string name, bool caching_allocator = false)
      : GpuImplementation(std::move(name), caching_allocator) {}

  // Device bytes held besides the inputs for `w`.
  [[nodiscard]] virtual std::uint64_t own_bytes(const Workload &w) const = 0;

  // N = max(1, #valid) and 1/N on the device (the first launch of a run).
  void count_rows() {
    count_valid_tokens(inputs().target.data(), T_, V_, ignore_index_, count_.data(), stream().get());
  }

  [[nodiscard]] jsd::RowArgs row_args() const {
    jsd::RowArgs a;
    a.student = inputs().student_log_probs.data();
    a.teacher = inputs().teacher_log_probs.data();
    a.target = inputs().target.data();
    a.count = count_.data();
    a.tokens = T_;
    a.vocab = V_;
    a.ignore_index = ignore_index_;
    a.beta = beta_;
    return a;
  }

  void prepare_common(const Workload &w) {
    T_ = w.tokens;
    V_ = w.vocab;
    beta_ = w.scalars.beta;
    ignore_index_ = w.scalars.ignore_index;
    if (inputs().student_log_probs.size() != cells(w) || inputs().teacher_log_probs.size() != cells(w))
      throw std::logic_error(fmt::format("{}: the device inputs hold no [T, V] log-probabilities", name()));
    count_ = DeviceBuffer<TokenCount>(allocator(), 1, MemoryTag::workspace);
    loss_device_ = DeviceBuffer<double>(allocator(), 1, MemoryTag::workspace);
  }

  void release_common() {
    count_ = {};
    loss_device_ = {};
  }

  // Copies the loss the last run left on the device (waits for the stream).
  double read_loss() {
    double loss = kNaN;
    CUDA_CHECK(
        cudaMemcpyAsync(&loss, loss_device_.data(), sizeof(loss), cudaMemcpyDeviceToHost, stream().get()));
    stream().synchronize();
    return loss;
  }

  std::int64_t T_ = 0, V_ = 0, ignore_index_ = -100;
  double beta_ = 0.5;
  DeviceBuffer<TokenCount> count_;
  DeviceBuffer<double> loss_device_;
};

// fused and oracle-fp64: the count, one row kernel (each row's loss and dX
// in one read of X and Y), the fixed-order row sum; three launches. They
// differ in the element type of dX and the row losses (fp32 or fp64), the
// row kernel, and the facts they state.
template <typename Real>
using RowKernel = void (*)(const jsd::RowArgs &, Real *grad, Real *row_loss, cudaStream_t);

template <typename Real> class JsdRows final : public JsdImplementation {
public:
  // `callable` views string literals: it lives as long as the program.
  JsdRows(const BuiltinCallable &callable, RowKernel<Real> row_kernel)
      : JsdImplementation(std::string(callable.name)), callable_(callable), row_kernel_(row_kernel) {}
  ~JsdRows() override { release(); }

  [[nodiscard]] RevisionFacts revision() const override { return cuda_revision(callable_); }

  void poison_outputs() override {
    loss_ = kNaN;
    poison(grad_);
  }
  void run(Pass pass) override {
    require_prepared();
    with_gradient_ = pass != Pass::forward;
    count_rows();
    row_kernel_(row_args(), with_gradient_ ? grad_.data() : nullptr, rows_.data(), stream().get());
    jsd::sum_rows(rows_.data(), T_, loss_device_.data(), stream().get());
  }
  OutputView outputs() override {
    OutputView view;
    view.loss = loss_ = read_loss();
    if (with_gradient_) view.grad_student_input = grad_.view();
    return view;
  }

private:
  [[nodiscard]] std::uint64_t own_bytes(const Workload &w) const override {
    return sizeof(Real) * (cells(w) + static_cast<std::uint64_t>(w.tokens)) + 64;
  }
  void prepare_device(const Workload &w) override {
    prepare_common(w);
    grad_ = DeviceBuffer<Real>(allocator(), cells(w), MemoryTag::output);
    rows_ = DeviceBuffer<Real>(allocator(), static_cast<std::size_t>(T_), MemoryTag::workspace);
  }
  void release_device() override {
    grad_ = {};
    rows_ = {};
    release_common();
  }

  BuiltinCallable callable_;
  RowKernel<Real> row_kernel_;
  DeviceBuffer<Real> grad_; // dloss/dX [T, V]
  DeviceBuffer<Real> rows_; // J_i / N [T]
  double loss_ = kNaN;
  bool with_gradient_ = false;
};

std::unique_ptr<Implementation> make_jsd_fused() {
  return std::make_unique<JsdRows<float>>(
      BuiltinCallable{.name = "fused",
                      .title = "Jensen-Shannon divergence loss · fused row kernel (CUDA)",
                      .description = "One bandwidth-bound kernel per row: Liger's generalized JSD and its "
                                     "gradient in one streaming read of both fp32 log-probability tensors "
                                     "and one write of the gradient (float4 accesses), then a fixed-order "
                                     "sum of the rows.",
                      .source_path = "kernels/jsd/jsd_kernels.cu",
                      .symbol = "kibench::make_fused",
                      .operation = operation_named("jsd")},
      &jsd::fused_rows);
}

// oracle-fp64: the row math in double, the fp32 inputs widened in registers.
std::unique_ptr<Implementation> make_jsd_oracle() {
  return std::make_unique<JsdRows<double>>(
      BuiltinCallable{.name = "oracle-fp64",
                      .title = "Jensen-Shannon divergence loss · fp64 oracle (CUDA)",
                      .description = "Liger's generalized JSD and its gradient in fp64 on the GPU, term by "
                                     "term as docs/loss-math.md defines them; the reference the GPU "
                                     "implementations are checked against.",
                      .source_path = "kernels/jsd/jsd_kernels.cu",
                      .symbol = "kibench::make_oracle_fp64",
                      .operation = operation_named("jsd")},
      &jsd::oracle_rows);
}

// reference: PyTorch eager's op sequence (docs/loss-math.md, "Reference
// semantics"), each op a kernel over full [T, V] fp32 tensors, allocated
// once (a caching allocator's steady state).
class JsdReference final : public JsdImplementation {
public:
  JsdReference() : JsdImplementation("reference", /*caching_allocator=*/true) {}
  ~JsdReference() override { release(); }

  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision({.name = "reference",
                          .title = "Jensen-Shannon divergence loss · torch-equivalent reference (CUDA)",
                          .description =
                              "PyTorch eager's jsd: exp, lerp, log, kl_div twice, row sums, masked "
                              "mean, and autograd's backward through the same ops, one kernel per "
                              "op over full [T, V] fp32 intermediates.",
                          .source_path = "kernels/jsd/reference/jsd_torch_ops.cu",
                          .symbol = "kibench::make_reference",
                          .operation = operation_named("jsd")});
  }

  void poison_outputs() override {
    loss_ = kNaN;
    poison(grad_);
  }

  void run(Pass pass) override {
    require_prepared();
    with_gradient_ = pass != Pass::forward;
    namespace ops = jsd::torch_ops;
    const cudaStream_t s = stream().get();
    const float *X = inputs().student_log_probs.data();
    const float *Y = inputs().teacher_log_probs.data();
    const std::int64_t *label = inputs().target.data();
    const auto n = static_cast<std::size_t>(T_ * V_);
    const auto b = static_cast<float>(beta_);
    count_rows();
    const jsd::Divergence form = jsd::divergence_of(beta_);
    // Forward.
    if (form == jsd::Divergence::mixture) {
      ops::exp(X, n, q_.data(), s);
      ops::exp(Y, n, p_.data(), s);
      ops::lerp(q_.data(), p_.data(), b, n, m_.data(), s);
      ops::log(m_.data(), n, log_m_.data(), s);
      ops::kl_div(log_m_.data(), Y, n, kl_.data(), s);
      ops::row_sum(kl_.data(), T_, V_, teacher_sum_.data(), s);
      ops::kl_div(log_m_.data(), X, n, kl_.data(), s);
      ops::row_sum(kl_.data(), T_, V_, student_sum_.data(), s);
      ops::axpby(b, teacher_sum_.data(), 1.0f - b, student_sum_.data(), T_, rows_.data(), s);
    } else {
      // beta = 0: kl_div(log q, log p); beta = 1: kl_div(log p, log q).
      const bool forward_kl = form == jsd::Divergence::forward_kl;
      ops::kl_div(forward_kl ? X : Y, forward_kl ? Y : X, n, kl_.data(), s);
      ops::row_sum(kl_.data(), T_, V_, rows_.data(), s);
    }
    ops::masked_mean(rows_.data(), label, ignore_index_, V_, T_, count_.data(), scaled_.data(),
                     loss_device_.data(), s);
    if (!with_gradient_) return;
    // Backward: autograd from the masked mean down to X.
    if (form == jsd::Divergence::mixture) {
      ops::masked_mean_backward(label, ignore_index_, V_, T_, count_.data(), b, g_teacher_.data(), s);
      ops::masked_mean_backward(label, ignore_index_, V_, T_, count_.data(), 1.0f - b, g_student_.data(), s);
      // kl_div(log m, log q): to its target X, and to its input log m.
      ops::kl_div_backward_target(log_m_.data(), X, g_student_.data(), T_, V_, false, grad_.data(), s);
      ops::kl_div_backward_input(X, g_student_.data(), T_, V_, false, m_grad_.data(), s);
      // kl_div(log m, log p): to its input log m (Y needs no gradient).
      ops::kl_div_backward_input(Y, g_teacher_.data(), T_, V_, true, m_grad_.data(), s);
      ops::div(m_grad_.data(), m_.data(), n, m_grad_.data(), s);     // log's backward: d/dm
      ops::scale(m_grad_.data(), 1.0f - b, n, m_grad_.data(), s);    // lerp's backward to q
      ops::mul(m_grad_.data(), q_.data(), n, true, grad_.data(), s); // exp's backward to X, accumulated
    } else if (form == jsd::Divergence::forward_kl) {
      ops::masked_mean_backward(label, ignore_index_, V_, T_, count_.data(), 1.0f, g_student_.data(), s);
      ops::kl_div_backward_input(Y, g_student_.data(), T_, V_, false, grad_.data(), s); // X is the input
    } else {
      ops::masked_mean_backward(label, ignore_index_, V_, T_, count_.data(), 1.0f, g_student_.data(), s);
      ops::kl_div_backward_target(Y, X, g_student_.data(), T_, V_, false, grad_.data(), s); // X is the target
    }
  }

  OutputView outputs() override {
    OutputView view;
    view.loss = loss_ = read_loss();
    if (with_gradient_) view.grad_student_input = grad_.view();
    return view;
  }

private:
  // Up to seven [T, V] fp32 tensors (q, p, m, log m, the kl_div buffer,
  // d/dm and the gradient) and a few [T] ones.
  [[nodiscard]] std::uint64_t own_bytes(const Workload &w) const override {
    return 4 * 7 * cells(w) + 4 * 6 * static_cast<std::uint64_t>(w.tokens) + 64;
  }
  void prepare_device(const Workload &w) override {
    prepare_common(w);
    const std::size_t n = cells(w), t = static_cast<std::size_t>(T_);
    const bool mixture = jsd::divergence_of(beta_) == jsd::Divergence::mixture;
    grad_ = DeviceBuffer<float>(allocator(), n, MemoryTag::output);
    kl_ = DeviceBuffer<float>(allocator(), n, MemoryTag::workspace);
    if (mixture) {
      q_ = DeviceBuffer<float>(allocator(), n, MemoryTag::workspace);
      p_ = DeviceBuffer<float>(allocator(), n, MemoryTag::workspace);
      m_ = DeviceBuffer<float>(allocator(), n, MemoryTag::workspace);
      log_m_ = DeviceBuffer<float>(allocator(), n, MemoryTag::workspace);
      m_grad_ = DeviceBuffer<float>(allocator(), n, MemoryTag::workspace);
    }
    for (auto *buffer : {&rows_, &scaled_, &teacher_sum_, &student_sum_, &g_teacher_, &g_student_})
      *buffer = DeviceBuffer<float>(allocator(), t, MemoryTag::workspace);
  }
  void release_device() override {
    for (auto *buffer : {&grad_, &kl_, &q_, &p_, &m_, &log_m_, &m_grad_, &rows_, &scaled_, &teacher_sum_,
                         &student_sum_, &g_teacher_, &g_student_})
      *buffer = {};
    release_common();
  }

  DeviceBuffer<float> grad_, kl_, q_, p_, m_, log_m_, m_grad_;                            // [T, V]
  DeviceBuffer<float> rows_, scaled_, teacher_sum_, student_sum_, g_teacher_, g_student_; // [T]
  double loss_ = kNaN;
  bool with_gradient_ = false;
};

// copy-floor: the fused kernel's bytes without its math. Full pass: read X
// and Y, write one [T, V] tensor (X + Y); forward: read X and Y, write a
// partial sum per block. No loss: nothing to check.
class CopyFloor final : public JsdImplementation {
public:
  CopyFloor() : JsdImplementation("copy-floor") {}
  ~CopyFloor() override { release(); }

  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision({.name = "copy-floor",
                          .title = "Jensen-Shannon divergence loss · copy floor (CUDA)",
                          .description = "The bytes the fused jsd kernel must move, moved by a vectorized "
                                         "streaming copy: both fp32 [T, V] inputs read once and, for a full "
                                         "pass, one [T, V] tensor written. The same-run bandwidth limit.",
                          .source_path = "kernels/jsd/jsd_kernels.cu",
                          .symbol = "kibench::make_copy_floor",
                          .operation = operation_named("jsd")});
  }
  [[nodiscard]] bool computes_loss() const override { return false; }

  void poison_outputs() override {}
  void run(Pass pass) override {
    require_prepared();
    const float *X = inputs().student_log_probs.data();
    const float *Y = inputs().teacher_log_probs.data();
    const auto n = static_cast<std::size_t>(T_ * V_);
    if (pass == Pass::forward)
      jsd::read_floor(X, Y, n, partial_.data(), stream().get());
    else
      jsd::copy_floor(X, Y, n, out_.data(), stream().get());
  }
  OutputView outputs() override {
    stream().synchronize();
    OutputView view;
    view.loss = kNaN;
    return view;
  }

private:
  [[nodiscard]] std::uint64_t own_bytes(const Workload &w) const override {
    return 4 * cells(w) + 4 * static_cast<std::uint64_t>(jsd::read_floor_blocks()) + 64;
  }
  void prepare_device(const Workload &w) override {
    prepare_common(w);
    out_ = DeviceBuffer<float>(allocator(), cells(w), MemoryTag::workspace);
    partial_ = DeviceBuffer<float>(allocator(), static_cast<std::size_t>(jsd::read_floor_blocks()),
                                   MemoryTag::workspace);
  }
  void release_device() override {
    out_ = {};
    partial_ = {};
    release_common();
  }

  DeviceBuffer<float> out_;
  DeviceBuffer<float> partial_;
};

} // namespace
} // namespace gpu

std::unique_ptr<Implementation> make_jsd_fused() {
  return gpu::make_jsd_fused();
}
std::unique_ptr<Implementation> make_jsd_reference() {
  return std::make_unique<gpu::JsdReference>();
}
std::unique_ptr<Implementation> make_jsd_oracle_fp64() {
  return gpu::make_jsd_oracle();
}
std::unique_ptr<Implementation> make_copy_floor() {
  return std::make_unique<gpu::CopyFloor>();
}

} // namespace kibench
