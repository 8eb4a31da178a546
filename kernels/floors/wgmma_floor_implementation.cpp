// FLOPs per pass, split into the kernel's two phases by whose operands
// the tensor cores see:
//   teacher phase  z_t                          2·T·V·H      (x_t, W_t)
//   student phase  z_s, and on a backward       2·T·V·Hs each (x_s, W_s)
//                  grad x_s and grad W_s
// so a full pass is 2·T·V·(H + 3·Hs), Workload::gemm_flops(true). The
// gradient products multiply G by W_s or x_s; G is not there without the
// loss, so x_s and W_s stand in for it: random bf16 bits of the inputs'
// own distributions.
#include "kernels/builtin_revision.hpp"
#include "kernels/floors/wgmma_floor_implementation.hpp"

#include <stdexcept>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_event_timer.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/l2_flush.hpp"
#include "kernels/cuda/nvml_power_monitor.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/floors/wgmma_floor.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "lib/inputs/input_set.hpp"

namespace kibench {

namespace gpu {

namespace {

namespace tf = tensor_floor;

tf::OperandSource source(const DeviceBuffer<__nv_bfloat16> &tensor) {
  return {tensor.data(), static_cast<std::int64_t>(tensor.size())};
}

class WgmmaFloor final : public Implementation {
public:
  [[nodiscard]] std::string name() const override { return "wgmma-floor"; }

  [[nodiscard]] RevisionFacts revision() const override {
    return cuda_revision(
        {.name = "wgmma-floor",
         .title = "Distillation JSD loss · tensor-core floor (wgmma on shared-memory operands)",
         .description =
             "The pass's GEMM FLOPs (2·T·V·(H + Hs) forward, 2·T·V·(H + 3·Hs) full) as wgmma "
             "m64n256k16 (bf16 in, fp32 accumulate) over operand tiles held in shared memory, copied once "
             "from the workload's inputs: one CTA of two warpgroups per SM, four 128 x 256 x 64 stages, "
             "no global-memory traffic, no epilogue, no output. A time floor below any GEMM of those "
             "FLOPs on the same GPU, data and power limit; not an implementation of the operation.",
         .source_path = "kernels/floors/wgmma_floor_implementation.cpp",
         .symbol = "kibench::make_wgmma_floor"});
  }

  [[nodiscard]] bool needs_gpu() const override { return true; }
  [[nodiscard]] bool computes_loss() const override { return false; }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    if (auto why = device_fit("wgmma-floor", 0)) return why;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, current_device()));
    if (prop.major != 9 || prop.minor != 0)
      return fmt::format("wgmma needs compute capability 9.0 (sm_90a); {} is {}.{}", prop.name, prop.major,
                         prop.minor);
    if (w.dtype != FloatType::bf16) return "the tensor-core floor multiplies bf16 operands only";
    return std::nullopt;
  }

  void prepare(const Workload &workload, InputSet &inputs) override {
    release();
    if (!stream_) stream_ = std::make_unique<Stream>();
    inputs_ = &device_inputs(inputs);
    device_ = current_device();
    CUDA_CHECK(cudaDeviceGetAttribute(&ctas_, cudaDevAttrMultiProcessorCount, device_));
    const double tv2 = 2.0 * static_cast<double>(workload.tokens) * static_cast<double>(workload.vocab);
    teacher_flops_ = tv2 * static_cast<double>(workload.hidden);
    student_flops_ = tv2 * static_cast<double>(workload.student_hidden);
    allocator_.reset_peak();
    sink_ = DeviceBuffer<float>(allocator_, static_cast<std::size_t>(ctas_) * tf::kThreadsPerCta,
                                MemoryTag::workspace);
    flush_ = std::make_unique<L2Flush>(flush_allocator_, device_);
  }

  void poison_outputs() override {}

  void run(Pass pass) override {
    if (inputs_ == nullptr) throw std::logic_error("wgmma-floor: used before prepare()");
    const double student_products = pass == Pass::forward ? 1.0 : pass == Pass::backward ? 2.0 : 3.0;
    const tf::Phase teacher{source(inputs_->teacher_input), source(inputs_->teacher_weight),
                            pass == Pass::backward ? 0 : tf::steps_for(teacher_flops_)};
    const tf::Phase student{source(inputs_->student_input), source(inputs_->student_weight),
                            tf::steps_for(student_products * student_flops_)};
    tf::launch(teacher, student, ctas_, sink_.data(), stream_->get());
  }

  OutputView outputs() override {
    stream_->synchronize();
    return OutputView{};
  }

  // What the kernel ran: its shape and how far its step count rounds up.
  [[nodiscard]] json::Object run_labels() const override {
    if (inputs_ == nullptr) throw std::logic_error("wgmma-floor: used before prepare()");
    const double wanted = teacher_flops_ + 3.0 * student_flops_;
    const double done =
        static_cast<double>(tf::steps_for(teacher_flops_) + tf::steps_for(3.0 * student_flops_)) *
        tf::kFlopsPerStep;
    return json::Object{{"ctas", std::to_string(ctas_)},
                        {"wgmma", "m64n256k16 bf16 -> fp32, A and B from shared memory, 2 warpgroups a CTA"},
                        {"full_pass_flops", fmt::format("{:.6e} of {:.6e}", done, wanted)}};
  }

  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    use.input_bytes = inputs_ != nullptr ? inputs_->bytes() : 0;
    use.workspace_bytes = allocator_.live_bytes(MemoryTag::workspace);
    use.peak_bytes = use.input_bytes + allocator_.peak_bytes();
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
    sink_.reset();
    flush_.reset();
    inputs_ = nullptr;
  }

  ~WgmmaFloor() override { release(); }

private:
  DeviceAllocator allocator_{"wgmma-floor"};
  DeviceAllocator flush_allocator_{"wgmma-floor-l2-flush"};
  std::unique_ptr<Stream> stream_;
  const DeviceInputs *inputs_ = nullptr;
  int device_ = 0;
  int ctas_ = 0;
  double teacher_flops_ = 0.0, student_flops_ = 0.0; // 2·T·V·H and 2·T·V·Hs
  DeviceBuffer<float> sink_;
  std::unique_ptr<L2Flush> flush_;
};

} // namespace

} // namespace gpu

std::unique_ptr<Implementation> make_wgmma_floor() {
  return std::make_unique<gpu::WgmmaFloor>();
}

} // namespace kibench
