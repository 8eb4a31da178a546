// FLOPs per pass, split into the kernel's two phases by whose operands
// the tensor cores see:
//   teacher phase  z_t                          2·T·V·H      (x_t, W_t)
//   student phase  z_s, and on a backward       2·T·V·Hs each (x_s, W_s)
//                  grad x_s and grad W_s
// so a full pass is 2·T·V·(H + 3·Hs), Workload::gemm_flops(true). The
// gradient products multiply G by W_s or x_s; G is not there without the
// loss, so x_s and W_s stand in for it: random bf16 bits of the inputs'
// own distributions.
#include "kernels/lm_head/lm_head_implementation.hpp"
#include "kernels/lm_head/floors/wgmma_floor_implementation.hpp"
#include "kernels/builtin_revision.hpp"

#include <stdexcept>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/lm_head/floors/wgmma_floor.hpp"

namespace kibench {

namespace gpu {

namespace {

namespace tf = tensor_floor;

tf::OperandSource source(const DeviceBuffer<__nv_bfloat16> &tensor) {
  return {tensor.data(), static_cast<std::int64_t>(tensor.size())};
}

class WgmmaFloor final : public LmHeadImplementation {
public:
  WgmmaFloor() : LmHeadImplementation("wgmma-floor") {}
  ~WgmmaFloor() override { release(); }


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
         .source_path = "kernels/lm_head/floors/wgmma_floor_implementation.cpp",
         .symbol = "kibench::make_wgmma_floor"});
  }

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

  void poison_outputs() override {}

  void run(Pass pass) override {
    require_prepared();
    const DeviceInputs &in = inputs();
    const double student_products = pass == Pass::forward ? 1.0 : pass == Pass::backward ? 2.0 : 3.0;
    const tf::Phase teacher{source(in.teacher_input), source(in.teacher_weight),
                            pass == Pass::backward ? 0 : tf::steps_for(teacher_flops_)};
    const tf::Phase student{source(in.student_input), source(in.student_weight),
                            tf::steps_for(student_products * student_flops_)};
    tf::launch(teacher, student, ctas_, sink_.data(), stream().get());
  }

  OutputView outputs() override {
    stream().synchronize();
    return OutputView{};
  }

  // What the kernel ran: its shape and how far its step count rounds up.
  [[nodiscard]] json::Object run_labels() const override {
    require_prepared();
    const double wanted = teacher_flops_ + 3.0 * student_flops_;
    const double done =
        static_cast<double>(tf::steps_for(teacher_flops_) + tf::steps_for(3.0 * student_flops_)) *
        tf::kFlopsPerStep;
    return json::Object{{"ctas", std::to_string(ctas_)},
                        {"wgmma", "m64n256k16 bf16 -> fp32, A and B from shared memory, 2 warpgroups a CTA"},
                        {"full_pass_flops", fmt::format("{:.6e} of {:.6e}", done, wanted)}};
  }

private:
  void prepare_device(const Workload &workload) override {
    CUDA_CHECK(cudaDeviceGetAttribute(&ctas_, cudaDevAttrMultiProcessorCount, device()));
    const double tv2 = 2.0 * static_cast<double>(workload.tokens) * static_cast<double>(workload.vocab);
    teacher_flops_ = tv2 * static_cast<double>(workload.hidden);
    student_flops_ = tv2 * static_cast<double>(workload.student_hidden);
    sink_ = DeviceBuffer<float>(allocator(), static_cast<std::size_t>(ctas_) * tf::kThreadsPerCta,
                                MemoryTag::workspace);
  }

  void release_device() override { sink_.reset(); }

  int ctas_ = 0;
  double teacher_flops_ = 0.0, student_flops_ = 0.0; // 2·T·V·H and 2·T·V·Hs
  DeviceBuffer<float> sink_;
};

} // namespace

} // namespace gpu

std::unique_ptr<Implementation> make_wgmma_floor() {
  return std::make_unique<gpu::WgmmaFloor>();
}

} // namespace kibench
