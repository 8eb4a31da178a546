#include "kernels/lm_head/lm_head_implementation.hpp"
#include "kernels/lm_head/reference/reference.hpp"
#include "kernels/builtin_revision.hpp"

#include <cmath>

#include <fmt/format.h>
#include <limits>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/lm_head/reference/reference_chain.hpp"

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

class Reference final : public LmHeadImplementation {
public:
  // A caching allocator, as PyTorch's: the chain's intermediates come and
  // go every pass.
  Reference() : LmHeadImplementation("reference", /*caching_allocator=*/true) {}
  ~Reference() override { release(); }


  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision({.name = "reference",
                          .title = "Distillation JSD loss · torch-equivalent reference (CUDA)",
                          .description =
                              "Eager PyTorch's op chain for Liger-Kernel's distill_jsd_loss module: "
                              "bf16 cuBLASLt logits, full fp32 [T, V] intermediates, one kernel "
                              "per op, autograd's backward.",
                          .source_path = "kernels/lm_head/reference/reference.cpp",
                          .symbol = "kibench::make_reference"});
  }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return device_fit("reference", reference_peak_bytes(w, Pass::full));
  }

  void before_sample(Pass pass) override {
    // A backward-only sample needs the graph of a forward (untimed).
    if (pass != Pass::backward) return;
    chain_->forward(io(), saved_);
    // The sample's outputs report this forward's loss (poisoning may come
    // between this and the sample).
    torch_ops::LossScalars host{};
    CUDA_CHECK(cudaMemcpyAsync(&host, scalars_.data(), sizeof(host), cudaMemcpyDeviceToHost, stream().get()));
    stream().synchronize();
    forward_loss_ = static_cast<double>(host.loss);
  }

  void poison_outputs() override { poison(scalars_, grad_x_, grad_w_, grad_b_); }

  // The caching allocator's traffic with the driver since it was made: after
  // the first pass a steady chain takes no new segment (block_pool.hpp).
  [[nodiscard]] json::Object run_labels() const override {
    const BlockPool::Counters c = allocator().pool_counters();
    return json::Object{
        {"allocator_segments",
         fmt::format(
             "{} cudaMalloc, {} cudaFree, {} out-of-memory retries over its check, warm-up and samples",
             c.segments_allocated, c.segments_released, c.out_of_memory_retries)}};
  }

  void run(Pass pass) override {
    require_prepared();
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
    stream().synchronize();
    torch_ops::LossScalars host{};
    CUDA_CHECK(cudaMemcpy(&host, scalars_.data(), sizeof(host), cudaMemcpyDeviceToHost));
    // A backward-only sample computes no loss of its own; the forward
    // before it did.
    const double loss = last_pass_ == Pass::backward ? forward_loss_ : static_cast<double>(host.loss);
    return output_view(loss, last_pass_ != Pass::forward, grad_x_, grad_w_, grad_b_);
  }

private:
  void prepare_device(const Workload &workload) override {
    shape_ = chain_shape(workload);
    blas_ = std::make_unique<CublasLt>(allocator());
    scalars_ = DeviceBuffer<torch_ops::LossScalars>(allocator(), 1, MemoryTag::output);
    const auto T = static_cast<std::size_t>(shape_.tokens), V = static_cast<std::size_t>(shape_.vocab);
    const auto Hs = static_cast<std::size_t>(shape_.student_hidden);
    grad_x_ = DeviceBuffer<__nv_bfloat16>(allocator(), T * Hs, MemoryTag::output);
    grad_w_ = DeviceBuffer<__nv_bfloat16>(allocator(), V * Hs, MemoryTag::output);
    if (shape_.student_bias) grad_b_ = DeviceBuffer<__nv_bfloat16>(allocator(), V, MemoryTag::output);
    arena_ = std::make_unique<TensorArena>(&allocator());
    chain_ = std::make_unique<ReferenceChain>(shape_, *arena_, blas_.get(), stream().get());
  }

  void release_device() override {
    saved_.clear();
    chain_.reset();
    arena_.reset();
    grad_x_.reset();
    grad_w_.reset();
    grad_b_.reset();
    scalars_.reset();
    blas_.reset();
    allocator().trim();
  }

  [[nodiscard]] ChainIo io() {
    return ChainIo{&inputs(), scalars_.data(), grad_x_.data(), grad_w_.data(),
                   grad_b_.empty() ? nullptr : grad_b_.data()};
  }

  ChainShape shape_;
  std::unique_ptr<CublasLt> blas_;
  DeviceBuffer<torch_ops::LossScalars> scalars_;
  DeviceBuffer<__nv_bfloat16> grad_x_, grad_w_, grad_b_;
  std::unique_ptr<TensorArena> arena_;
  std::unique_ptr<ReferenceChain> chain_;
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
