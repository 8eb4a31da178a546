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
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/tuning_labels.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "lib/inputs/input_set.hpp"

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

class CublasFloor final : public Implementation {
public:
  [[nodiscard]] std::string name() const override { return "cublas-floor"; }

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

  [[nodiscard]] bool needs_gpu() const override { return true; }
  [[nodiscard]] bool computes_loss() const override { return false; }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return device_fit("cublas-floor", floor_peak_bytes(w));
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    if (!stream_) stream_ = std::make_unique<Stream>();
    inputs_ = &device_inputs(inputs);
    device_ = current_device();
    tokens_ = workload.tokens;
    vocab_ = workload.vocab;
    hidden_ = workload.hidden;
    student_hidden_ = workload.student_hidden;
    rows_ = chunk_rows(workload);
    allocator_.reset_peak();
    blas_ = std::make_unique<CublasLt>(allocator_);
    const auto V = static_cast<std::size_t>(vocab_), R = static_cast<std::size_t>(rows_);
    student_logits_ = DeviceBuffer<__nv_bfloat16>(allocator_, R * V, MemoryTag::workspace);
    teacher_logits_ = DeviceBuffer<__nv_bfloat16>(allocator_, R * V, MemoryTag::workspace);
    grad_x_ = DeviceBuffer<__nv_bfloat16>(allocator_, static_cast<std::size_t>(tokens_ * student_hidden_),
                                          MemoryTag::output);
    grad_w_ = DeviceBuffer<__nv_bfloat16>(allocator_, static_cast<std::size_t>(vocab_ * student_hidden_),
                                          MemoryTag::output);
    flush_ = std::make_unique<L2Flush>(flush_allocator_, device_);
    // The floor is the best cuBLASLt does, so its algorithms are chosen by
    // measurement too: one full pass times the candidates of each shape.
    blas_->tune_during(kMeasuredTuning, stream_->get(), [&] { run(Pass::full); });
  }

  void before_sample(Pass pass) override {
    // A backward-only sample needs logits to use as G (untimed).
    if (pass == Pass::backward && !logits_ready_) run(Pass::forward);
  }

  void poison_outputs() override {
    CUDA_CHECK(cudaMemsetAsync(grad_x_.data(), 0xFF, grad_x_.bytes(), stream_->get()));
    CUDA_CHECK(cudaMemsetAsync(grad_w_.data(), 0xFF, grad_w_.bytes(), stream_->get()));
  }

  void run(Pass pass) override {
    const DeviceInputs &in = *inputs_;
    if (pass != Pass::backward) logits_ready_ = true;
    for (std::int64_t first = 0; first < tokens_; first += rows_) {
      const std::int64_t rows = std::min(rows_, tokens_ - first);
      const __nv_bfloat16 *x_s = in.student_input.data() + first * student_hidden_;
      // A backward-only sample reuses the logits left by an earlier run as G
      // (when the logits are chunked: the last chunk's).
      if (pass != Pass::backward) {
        blas_->matmul(
            gemm_abt(rows, vocab_, student_hidden_, x_s, in.student_weight.data(), student_logits_.data()),
            stream_->get());
        blas_->matmul(gemm_abt(rows, vocab_, hidden_, in.teacher_input.data() + first * hidden_,
                               in.teacher_weight.data(), teacher_logits_.data()),
                      stream_->get());
      }
      if (pass == Pass::forward) continue;
      blas_->matmul(gemm_ab(rows, student_hidden_, vocab_, student_logits_.data(), in.student_weight.data(),
                            grad_x_.data() + first * student_hidden_),
                    stream_->get());
      RowMajorGemm grad_w =
          gemm_atb(vocab_, student_hidden_, rows, student_logits_.data(), x_s, grad_w_.data());
      grad_w.beta = first == 0 ? 0.0 : 1.0;
      blas_->matmul(grad_w, stream_->get());
    }
  }

  OutputView outputs() override {
    stream_->synchronize();
    return OutputView{};
  }

  // The GEMM algorithms tuning chose, and the rows each GEMM runs over.
  [[nodiscard]] json::Object run_labels() const override {
    if (blas_ == nullptr) throw std::logic_error("cublas-floor: used before prepare()");
    json::Object labels = gemm_tuning_labels(*blas_, kMeasuredTuning);
    labels.set("chunk_rows", std::to_string(rows_));
    labels.set("chunks", std::to_string((tokens_ + rows_ - 1) / rows_));
    return labels;
  }

  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    use.input_bytes = inputs_ != nullptr ? inputs_->bytes() : 0;
    use.output_bytes = allocator_.live_bytes(MemoryTag::output);
    use.peak_bytes = use.input_bytes + allocator_.peak_bytes();
    use.workspace_bytes = use.peak_bytes - use.input_bytes - use.output_bytes;
    return use;
  }

  std::unique_ptr<SampleTimer> make_timer() override {
    return std::make_unique<CudaEventTimer>(stream_->get(), device_);
  }

  std::unique_ptr<PowerMonitor> make_power_monitor() override { return make_nvml_power_monitor(device_); }

  void flush_caches() override {
    if (flush_) flush_->flush(stream_->get());
  }

  void release() override {
    if (inputs_ != nullptr) stream_->synchronize();
    student_logits_.reset();
    teacher_logits_.reset();
    grad_x_.reset();
    grad_w_.reset();
    blas_.reset();
    flush_.reset();
    inputs_ = nullptr;
    logits_ready_ = false;
  }

  ~CublasFloor() override { release(); }

private:
  DeviceAllocator allocator_{"cublas-floor"};
  DeviceAllocator flush_allocator_{"cublas-floor-l2-flush"};
  // Made in prepare(): constructing an implementation touches no GPU.
  std::unique_ptr<Stream> stream_;
  const DeviceInputs *inputs_ = nullptr;
  int device_ = 0;
  std::int64_t tokens_ = 0, vocab_ = 0, hidden_ = 0, student_hidden_ = 0, rows_ = 0;
  bool logits_ready_ = false;
  std::unique_ptr<CublasLt> blas_;
  DeviceBuffer<__nv_bfloat16> student_logits_, teacher_logits_, grad_x_, grad_w_;
  std::unique_ptr<L2Flush> flush_;
};

} // namespace

} // namespace gpu

std::unique_ptr<Implementation> make_cublas_floor() {
  return std::make_unique<gpu::CublasFloor>();
}

} // namespace kibench
