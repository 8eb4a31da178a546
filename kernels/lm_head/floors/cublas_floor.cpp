// The floor's work, pass by pass:
//   forward   z_s = x_s · W_sᵀ, z_t = x_t · W_tᵀ          (bf16 out)
//   backward  grad x_s = G · W_s, grad W_s = Gᵀ · x_s     (bf16 out)
// G is the student logits just computed (random-like data: a product over
// zeros would run faster than real data). When two full [T, V] bf16
// matrices do not fit, the logits are produced in token chunks, and grad
// W_s accumulates over chunks through beta = 1, as a chunked
// implementation would have to.
//
// Two layouts, both timed when the workload is prepared, the faster kept
// (and named in the run's labels), so the floor stays a lower bound for
// every shape:
//   natural  the logits dense, [rows, V], each GEMM one cuBLASLt call: what
//            eager PyTorch's layout gets;
//   aligned  the logit rows padded to a multiple of 8 columns and every GEMM
//            whose vocabulary extent is no multiple of 8 cut at its last
//            one (kernels/cuda/aligned_gemm.hpp), as fused runs them.
// Where V is a multiple of 8 the two are the same GEMMs, and only the
// natural one runs.
#include "kernels/lm_head/lm_head_implementation.hpp"
#include "kernels/lm_head/floors/cublas_floor.hpp"
#include "kernels/builtin_revision.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/tuning_labels.hpp"

namespace kibench {

namespace gpu {

namespace {

// Logit chunks are capped so the floor's workspace stays within this.
constexpr std::uint64_t kMaxLogitBytes = std::uint64_t{24} << 30;

enum class Layout { natural, aligned };

// Full passes of each layout timed when choosing (alternating, median).
constexpr int kLayoutTrials = 5;

std::int64_t chunk_rows(const Workload &w) {
  const auto row_bytes =
      static_cast<std::uint64_t>(2 * 2 * aligned_stride(w.vocab)); // z_s and z_t rows, bf16
  const auto rows = static_cast<std::int64_t>(kMaxLogitBytes / row_bytes);
  return std::clamp<std::int64_t>(rows, 1, w.tokens);
}

std::uint64_t floor_peak_bytes(const Workload &w) {
  const auto T = static_cast<std::uint64_t>(w.tokens), V = static_cast<std::uint64_t>(w.vocab);
  const auto Hs = static_cast<std::uint64_t>(w.student_hidden);
  const auto rows = static_cast<std::uint64_t>(chunk_rows(w));
  const auto ld = static_cast<std::uint64_t>(aligned_stride(w.vocab));
  return cpu::planned_input_bytes(w) + 2 * (T * Hs + V * Hs) + 2 * 2 * rows * ld +
         CublasLt::kDefaultWorkspaceBytes;
}

class CublasFloor final : public LmHeadImplementation {
public:
  CublasFloor() : LmHeadImplementation("cublas-floor") {}
  ~CublasFloor() override { release(); }


  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision(
        {.name = "cublas-floor",
         .title = "Distillation JSD loss · cuBLASLt GEMM floor",
         .description = fmt::format("The four bf16 GEMMs of the loss's forward and backward (z_s, z_t, "
                                    "grad x_s, grad W_s) through cuBLASLt, without the loss: a time floor, "
                                    "not an implementation of the operation. Per GEMM shape the fastest of "
                                    "cuBLASLt's heuristic's first {} algorithms (where the fastest takes {:g} ms or "
                                    "more, those within {:g} % of it timed again back to back at the power "
                                    "limit), timed in an untimed pass "
                                    "when the workload is prepared, as the fused path does. Where V is no "
                                    "multiple of 8, the faster of two layouts, both timed then: the logits "
                                    "dense with one call a GEMM, or their rows padded to a multiple of 8 and "
                                    "each GEMM cut at its last aligned column.",
                                    kMeasuredTuning.candidates, kMeasuredTuning.at_cap_min_ms,
                                    kMeasuredTuning.at_cap_margin * 100.0),
         .source_path = "kernels/lm_head/floors/cublas_floor.cpp",
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

  void run(Pass pass) override { run_layout(layout_, pass); }

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
    labels.set("layout", layout_choice_);
    return labels;
  }

private:
  void prepare_device(const Workload &w) override {
    rows_ = chunk_rows(w);
    blas_ = std::make_unique<CublasLt>(allocator());
    const auto ld = static_cast<std::size_t>(aligned_stride(w.vocab)), R = static_cast<std::size_t>(rows_);
    student_logits_ = DeviceBuffer<__nv_bfloat16>(allocator(), R * ld, MemoryTag::workspace);
    teacher_logits_ = DeviceBuffer<__nv_bfloat16>(allocator(), R * ld, MemoryTag::workspace);
    grad_x_ = DeviceBuffer<__nv_bfloat16>(allocator(), static_cast<std::size_t>(w.tokens * w.student_hidden),
                                          MemoryTag::output);
    grad_w_ = DeviceBuffer<__nv_bfloat16>(allocator(), static_cast<std::size_t>(w.vocab * w.student_hidden),
                                          MemoryTag::output);
    // The floor is the best cuBLASLt does, so its algorithms are chosen by
    // measurement too: one full pass of each layout times the candidates of
    // each shape; then the faster layout.
    const bool both = w.vocab % 8 != 0;
    blas_->tune_during(kMeasuredTuning, stream().get(), [&] {
      run_layout(Layout::natural, Pass::full);
      if (both) run_layout(Layout::aligned, Pass::full);
    });
    layout_ = Layout::natural;
    layout_choice_ = "natural: the logits dense, one cuBLASLt call a GEMM (V is a multiple of 8)";
    if (both) choose_layout();
  }

  // Times kLayoutTrials full passes of each layout, alternating, and keeps
  // the one with the smaller median.
  void choose_layout() {
    std::vector<double> ms[2];
    Event start, stop;
    for (int trial = 0; trial < kLayoutTrials; ++trial)
      for (const Layout layout : {Layout::natural, Layout::aligned}) {
        start.record(stream());
        run_layout(layout, Pass::full);
        stop.record(stream());
        stop.synchronize();
        ms[static_cast<int>(layout)].push_back(Event::elapsed_ms(start, stop));
      }
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double natural = median(ms[0]), aligned = median(ms[1]);
    layout_ = aligned < natural ? Layout::aligned : Layout::natural;
    layout_choice_ = fmt::format(
        "{}: of the natural layout ({:.3f} ms a full pass) and the aligned one (logit rows padded to {} "
        "columns, GEMMs cut at column {}: {:.3f} ms), the faster",
        layout_ == Layout::aligned ? "aligned" : "natural", natural, aligned_stride(workload().vocab),
        workload().vocab - workload().vocab % 8, aligned);
  }

  void run_layout(Layout layout, Pass pass) {
    const DeviceInputs &in = inputs();
    const Workload &w = workload();
    const std::int64_t T = w.tokens, V = w.vocab, H = w.hidden, Hs = w.student_hidden;
    const bool aligned = layout == Layout::aligned;
    const std::int64_t ld = aligned ? aligned_stride(V) : V;
    const auto matmul = [&](const RowMajorGemm &g) {
      if (aligned) {
        matmul_aligned(*blas_, g, stream());
      } else {
        blas_->matmul(g, stream());
      }
    };
    if (pass != Pass::backward) logits_ready_ = true;
    for (std::int64_t first = 0; first < T; first += rows_) {
      const std::int64_t rows = std::min(rows_, T - first);
      const __nv_bfloat16 *x_s = in.student_input.data() + first * Hs;
      // A backward-only sample reuses the logits left by an earlier run as G
      // (when the logits are chunked: the last chunk's).
      if (pass != Pass::backward) {
        RowMajorGemm z_s = gemm_abt(rows, V, Hs, x_s, in.student_weight.data(), student_logits_.data());
        z_s.ldc = ld;
        matmul(z_s);
        RowMajorGemm z_t = gemm_abt(rows, V, H, in.teacher_input.data() + first * H, in.teacher_weight.data(),
                                    teacher_logits_.data());
        z_t.ldc = ld;
        matmul(z_t);
      }
      if (pass == Pass::forward) continue;
      RowMajorGemm grad_x =
          gemm_ab(rows, Hs, V, student_logits_.data(), in.student_weight.data(), grad_x_.data() + first * Hs);
      grad_x.lda = ld;
      matmul(grad_x);
      RowMajorGemm grad_w = gemm_atb(V, Hs, rows, student_logits_.data(), x_s, grad_w_.data());
      grad_w.lda = ld;
      grad_w.beta = first == 0 ? 0.0 : 1.0;
      matmul(grad_w);
    }
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
  Layout layout_ = Layout::natural;
  std::string layout_choice_; // the "layout" run label
  std::unique_ptr<CublasLt> blas_;
  DeviceBuffer<__nv_bfloat16> student_logits_, teacher_logits_, grad_x_, grad_w_;
};

} // namespace

} // namespace gpu

std::unique_ptr<Implementation> make_cublas_floor() {
  return std::make_unique<gpu::CublasFloor>();
}

} // namespace kibench
