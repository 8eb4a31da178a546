#include "kernels/builtin_revision.hpp"
#include "kernels/reference/reference.hpp"

#include <cmath>
#include <limits>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "lib/inputs/input_set.hpp"
#include "kernels/reference/reference_chain.hpp"

namespace kibench {

namespace gpu {

namespace {

ChainShape chain_shape(const Workload &w) {
  ChainShape s;
  s.tokens = w.tokens;
  s.vocab = w.vocab;
  s.hidden = w.hidden;
  s.student_hidden = w.student_hidden;
  s.student_bias = w.student_bias.has_value();
  s.teacher_bias = w.teacher_bias.has_value();
  s.beta = w.scalars.beta;
  s.temperature = w.scalars.temperature;
  s.weight_hard = w.scalars.weight_hard;
  s.weight_soft = w.scalars.weight_soft;
  s.ignore_index = w.scalars.ignore_index;
  return s;
}

std::uint64_t gradient_bytes(const Workload &w) {
  const auto V = static_cast<std::uint64_t>(w.vocab), Hs = static_cast<std::uint64_t>(w.student_hidden);
  return 2 * (static_cast<std::uint64_t>(w.tokens) * Hs + V * Hs + (w.student_bias ? V : 0));
}

class Reference final : public Implementation {
public:
  [[nodiscard]] std::string name() const override { return "reference"; }

  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision({.name = "reference",
                              .title = "Distillation JSD loss · torch-equivalent reference (CUDA)",
                              .description =
                                  "Eager PyTorch's op chain for Liger-Kernel's distill_jsd_loss module: "
                                  "bf16 cuBLASLt logits, full fp32 [T, V] intermediates, one kernel "
                                  "per op, autograd's backward.",
                              .source_path = "kernels/reference/reference.cpp",
                              .symbol = "kibench::make_reference"});
  }

  [[nodiscard]] bool needs_gpu() const override { return true; }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return device_fit("reference", reference_peak_bytes(w, Pass::full));
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    if (!stream_) stream_ = std::make_unique<Stream>();
    shape_ = chain_shape(workload);
    inputs_ = &device_inputs(inputs);
    device_ = current_device();
    allocator_.reset_peak();
    blas_ = std::make_unique<CublasLt>(allocator_);
    scalars_ = DeviceBuffer<torch_ops::LossScalars>(allocator_, 1, MemoryTag::output);
    const auto T = static_cast<std::size_t>(shape_.tokens), V = static_cast<std::size_t>(shape_.vocab);
    const auto Hs = static_cast<std::size_t>(shape_.student_hidden);
    grad_x_ = DeviceBuffer<__nv_bfloat16>(allocator_, T * Hs, MemoryTag::output);
    grad_w_ = DeviceBuffer<__nv_bfloat16>(allocator_, V * Hs, MemoryTag::output);
    if (shape_.student_bias) grad_b_ = DeviceBuffer<__nv_bfloat16>(allocator_, V, MemoryTag::output);
    arena_ = std::make_unique<TensorArena>(&allocator_);
    chain_ = std::make_unique<ReferenceChain>(shape_, *arena_, blas_.get(), stream_->get());
    // Kept apart from allocator_: the flush is the harness's, not the chain's.
    flush_ = std::make_unique<L2Flush>(flush_allocator_, device_);
  }

  void before_sample(Pass pass) override {
    // A backward-only sample needs the graph of a forward (untimed).
    if (pass != Pass::backward) return;
    chain_->forward(io(), saved_);
    // The sample's outputs report this forward's loss (poisoning may come
    // between this and the sample).
    torch_ops::LossScalars host{};
    CUDA_CHECK(cudaMemcpyAsync(&host, scalars_.data(), sizeof(host), cudaMemcpyDeviceToHost, stream_->get()));
    stream_->synchronize();
    forward_loss_ = static_cast<double>(host.loss);
  }

  void poison_outputs() override {
    // 0xFF bytes are NaN in bf16 and fp32 alike.
    CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0xFF, scalars_.bytes(), stream_->get()));
    CUDA_CHECK(cudaMemsetAsync(grad_x_.data(), 0xFF, grad_x_.bytes(), stream_->get()));
    CUDA_CHECK(cudaMemsetAsync(grad_w_.data(), 0xFF, grad_w_.bytes(), stream_->get()));
    if (!grad_b_.empty()) CUDA_CHECK(cudaMemsetAsync(grad_b_.data(), 0xFF, grad_b_.bytes(), stream_->get()));
  }

  void run(Pass pass) override {
    last_pass_ = pass;
    if (pass != Pass::backward) chain_->forward(io(), saved_);
    if (pass == Pass::forward) {
      saved_.clear(); // the loss goes out of scope: autograd frees the graph
      return;
    }
    if (!saved_.valid) throw std::logic_error("reference: backward without a forward");
    chain_->backward(io(), saved_);
  }

  OutputView outputs() override {
    stream_->synchronize();
    torch_ops::LossScalars host{};
    CUDA_CHECK(cudaMemcpy(&host, scalars_.data(), sizeof(host), cudaMemcpyDeviceToHost));
    OutputView view;
    // A backward-only sample computes no loss of its own; the forward
    // before it did.
    view.loss = last_pass_ == Pass::backward ? forward_loss_ : static_cast<double>(host.loss);
    if (last_pass_ != Pass::forward) {
      view.grad_student_input = grad_x_.view();
      view.grad_student_weight = grad_w_.view();
      if (!grad_b_.empty()) view.grad_student_bias = grad_b_.view();
    }
    return view;
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
    saved_.clear();
    chain_.reset();
    arena_.reset();
    grad_x_.reset();
    grad_w_.reset();
    grad_b_.reset();
    scalars_.reset();
    blas_.reset();
    flush_.reset();
    allocator_.trim();
    inputs_ = nullptr;
  }

  ~Reference() override { release(); }

private:
  [[nodiscard]] ChainIo io() {
    return ChainIo{inputs_, scalars_.data(), grad_x_.data(), grad_w_.data(),
                   grad_b_.empty() ? nullptr : grad_b_.data()};
  }

  // Declared first, destroyed last: every buffer below returns to them.
  DeviceAllocator allocator_{"reference", /*caching=*/true};
  DeviceAllocator flush_allocator_{"reference-l2-flush"};
  // Made in prepare(): constructing an implementation touches no GPU.
  std::unique_ptr<Stream> stream_;
  ChainShape shape_;
  DeviceInputs *inputs_ = nullptr;
  int device_ = 0;
  std::unique_ptr<CublasLt> blas_;
  DeviceBuffer<torch_ops::LossScalars> scalars_;
  DeviceBuffer<__nv_bfloat16> grad_x_, grad_w_, grad_b_;
  std::unique_ptr<TensorArena> arena_;
  std::unique_ptr<ReferenceChain> chain_;
  std::unique_ptr<L2Flush> flush_;
  SavedTensors saved_;
  Pass last_pass_ = Pass::full;
  double forward_loss_ = std::numeric_limits<double>::quiet_NaN();
};

} // namespace

std::uint64_t reference_peak_bytes(const Workload &w, Pass pass) {
  const std::uint64_t chain = ReferenceChain::predicted_peak_bytes(chain_shape(w), pass != Pass::forward);
  return cpu::planned_input_bytes(w) + gradient_bytes(w) + CublasLt::kDefaultWorkspaceBytes + chain +
         DeviceAllocator::rounded(sizeof(torch_ops::LossScalars));
}

} // namespace gpu

std::unique_ptr<Implementation> make_reference() {
  return std::make_unique<gpu::Reference>();
}

} // namespace kibench
