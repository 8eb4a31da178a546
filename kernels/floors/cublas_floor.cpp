// The floor's work, pass by pass:
//   forward   z_s = x_s · W_sᵀ, z_t = x_t · W_tᵀ          (bf16 out)
//   backward  grad x_s = G · W_s, grad W_s = Gᵀ · x_s     (bf16 out)
// G is the student logits just computed (random-like data: a product over
// zeros would run faster than real data). When two full [T, V] bf16
// matrices do not fit, the logits are produced in token chunks, and grad
// W_s accumulates over chunks through beta = 1, as a chunked
// implementation would have to.
#include "kernels/builtin_revision.hpp"
#include "kernels/floors/cublas_floor.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/cuda/tuning_labels.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/device_inputs.hpp"

namespace kibench {

namespace gpu {

namespace {

// Logit chunks are capped so the floor's workspace stays within this.
constexpr std::uint64_t kMaxLogitBytes = std::uint64_t{24} << 30;

std::int64_t chunk_rows(const Workload &w) {
  const auto row_bytes = static_cast<std::uint64_t>(2 * 2 * w.vocab); // z_s and z_t rows, bf16
  const auto rows = static_cast<std::int64_t>(kMaxLogitBytes / row_bytes);
  return std::clamp<std::int64_t>(rows, 1, w.tokens);
}

std::uint64_t floor_peak_bytes(const Workload &w) {
  const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
  const auto Hs = static_cast<std::uint64_t>(w.student_hidden);
  const auto rows = static_cast<std::uint64_t>(chunk_rows(w));
  return cpu::planned_input_bytes(w) + 2 * (T * Hs + V * Hs) + 2 * 2 * rows * V +
         CublasLt::kDefaultWorkspaceBytes;
}

class CublasFloor final : public GpuImplementation {
public:
  CublasFloor() : GpuImplementation("cublas-floor") {}
  ~CublasFloor() override { release(); }

  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision(
        {.name = "cublas-floor",
         .title = "Distillation JSD loss · cuBLASLt GEMM floor",
         .description = fmt::format("The four bf16 GEMMs of the loss's forward and backward (z_s, z_t, "
                                    "grad x_s, grad W_s) through cuBLASLt, without the loss: a time floor, "
                                    "not an implementation of the operation. Per GEMM shape the fastest of "
                                    "cuBLASLt's heuristic's first {} algorithms, timed in an untimed pass "
                                    "when the workload is prepared, as the fused path does.",
                                    kMeasuredTuning.candidates),
         .source_path = "kernels/floors/cublas_floor.cpp",
         .symbol = "kibench::make_cublas_floor"});
  }

  [[nodiscard]] bool computes_loss() const override { return false; }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return device_fit("cublas-floor", floor_peak_bytes(w));
  }

  void before_sample(Pass pass) override {
    // A backward-only sample needs logits to use as G (untimed).
    if (pass == Pass::backward && !logits_ready_) run(Pass::forward);
  }

  void poison_outputs() override { poison(grad_x_, grad_w_); }

  void run(Pass pass) override {
    const DeviceInputs &in = inputs();
    const Workload &w = workload();
    const std::int64_t T = w.tokens, V = w.vocab, H = w.hidden, Hs = w.student_hidden;
    if (pass != Pass::backward) logits_ready_ = true;
    for (std::int64_t first = 0; first < T; first += rows_) {
      const std::int64_t rows = std::min(rows_, T - first);
      const __nv_bfloat16 *x_s = in.student_input.data() + first * Hs;
      // A backward-only sample reuses the logits left by an earlier run as G
      // (when the logits are chunked: the last chunk's).
      if (pass != Pass::backward) {
        blas_->matmul(gemm_abt(rows, V, Hs, x_s, in.student_weight.data(), student_logits_.data()), stream());
        blas_->matmul(gemm_abt(rows, V, H, in.teacher_input.data() + first * H, in.teacher_weight.data(),
                               teacher_logits_.data()),
                      stream());
      }
      if (pass == Pass::forward) continue;
      blas_->matmul(gemm_ab(rows, Hs, V, student_logits_.data(), in.student_weight.data(), grad_x_.data() + first * Hs),
                    stream());
      RowMajorGemm grad_w = gemm_atb(V, Hs, rows, student_logits_.data(), x_s, grad_w_.data());
      grad_w.beta = first == 0 ? 0.0 : 1.0;
      blas_->matmul(grad_w, stream());
    }
  }

  OutputView outputs() override {
    stream().synchronize();
    return OutputView{};
  }

  // The GEMM algorithms tuning chose, and the rows each GEMM runs over.
  [[nodiscard]] json::Object run_labels() const override {
    require_prepared();
    json::Object labels = gemm_tuning_labels(*blas_, kMeasuredTuning);
    labels.set("chunk_rows", std::to_string(rows_));
    labels.set("chunks", std::to_string((workload().tokens + rows_ - 1) / rows_));
    return labels;
  }

private:
  void prepare_device(const Workload &w) override {
    rows_ = chunk_rows(w);
    blas_ = std::make_unique<CublasLt>(allocator());
    const auto V = static_cast<std::size_t>(w.vocab), R = static_cast<std::size_t>(rows_);
    student_logits_ = DeviceBuffer<__nv_bfloat16>(allocator(), R * V, MemoryTag::workspace);
    teacher_logits_ = DeviceBuffer<__nv_bfloat16>(allocator(), R * V, MemoryTag::workspace);
    grad_x_ = DeviceBuffer<__nv_bfloat16>(allocator(), static_cast<std::size_t>(w.tokens * w.student_hidden),
                                          MemoryTag::output);
    grad_w_ = DeviceBuffer<__nv_bfloat16>(allocator(), static_cast<std::size_t>(w.vocab * w.student_hidden),
                                          MemoryTag::output);
    // The floor is the best cuBLASLt does, so its algorithms are chosen by
    // measurement too: one full pass times the candidates of each shape.
    blas_->tune_during(kMeasuredTuning, stream().get(), [&] { run(Pass::full); });
  }

  void release_device() override {
    student_logits_.reset();
    teacher_logits_.reset();
    grad_x_.reset();
    grad_w_.reset();
    blas_.reset();
    logits_ready_ = false;
  }

  std::int64_t rows_ = 0;
  bool logits_ready_ = false;
  std::unique_ptr<CublasLt> blas_;
  DeviceBuffer<__nv_bfloat16> student_logits_, teacher_logits_, grad_x_, grad_w_;
};

} // namespace

} // namespace gpu

std::unique_ptr<Implementation> make_cublas_floor() {
  return std::make_unique<gpu::CublasFloor>();
}

} // namespace kibench
