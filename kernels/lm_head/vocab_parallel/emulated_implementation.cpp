// The single-GPU emulation of the vocabulary-parallel fused loss
// (emulated_implementation.hpp has the data flow). Every rank's buffers are
// its own allocations, every collective goes through DeviceCommunicator,
// and the ranks run one after another on the one stream: what a rank reads
// of another rank is only ever what an all-reduce handed it.
#include "kernels/lm_head/vocab_parallel/emulated_implementation.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/bf16_ones.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/common/loss_sum.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"
#include "kernels/lm_head/fused/scaled_convert.hpp"
#include "kernels/lm_head/fused/target_order_buffers.hpp"
#include "kernels/common/token_count.hpp"
#include "kernels/lm_head/vocab_parallel/device_communicator.hpp"
#include "kernels/lm_head/vocab_parallel/emulation_plan.hpp"
#include "kernels/lm_head/vocab_parallel/shard_one_hot.hpp"
#include "kernels/lm_head/vocab_parallel/shard_row_loss.hpp"
#include "kernels/lm_head/vocab_parallel/shard_work.hpp"

namespace kibench {

namespace {

using gpu::DeviceBuffer;
using gpu::MemoryTag;
using vocab_parallel::EmulationPlan;
using vocab_parallel::ShardLayout;
using bf16 = __nv_bfloat16;

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

class VocabParallelEmulation final : public gpu::GpuImplementation {
public:
  explicit VocabParallelEmulation(VocabParallelEmulationOptions options)
      : GpuImplementation(options.name), options_(std::move(options)), communicator_(options_.shards) {}
  ~VocabParallelEmulation() override { release(); }

  [[nodiscard]] RevisionFacts revision() const override {
    const std::string title = fmt::format(
        "kibench fused distillation loss, vocabulary-parallel over {} shards, emulated on one GPU (CUDA)",
        options_.shards);
    const std::string description = fmt::format(
        "The LM heads cut along the vocabulary into {} shards (sizes within one row), run one after another "
        "on one GPU: per token chunk each shard computes its slice of both logit matrices (cuBLASLt, bf16) "
        "and per-row partial statistics; row maxima, sums of exponentials with the target logit, and KL "
        "partial sums are combined by all-reduces over device buffers (a local communicator reducing the "
        "shards' buffers in rank order, behind the interface a NCCL communicator implements); each shard "
        "then writes its slice of the gradient row and runs its gradient GEMMs. grad W and grad b stay "
        "per shard (each shard's rows of the outputs), grad x is an all-reduce sum. Shards run serially: "
        "this tests the sharded data flow, it does not time a multi-GPU run. Chunk rows: the most whose "
        "buffers fit {}.",
        options_.shards,
        options_.chunk_rows > 0 ? fmt::format("{} rows (fixed)", options_.chunk_rows)
                                : fmt::format("{} bytes", chunk_budget()));
    return cuda_revision({.name = options_.name,
                          .title = title,
                          .description = description,
                          .source_path = "kernels/lm_head/vocab_parallel/emulated_implementation.cpp",
                          .symbol = "kibench::make_vocab_parallel_emulated"});
  }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    if (!gpu::gpu_available()) return fmt::format("no GPU: {}", gpu::gpu_availability().reason);
    if (w.dtype != FloatType::bf16) return fmt::format("{} computes bf16 workloads only", options_.name);
    if (w.scalars.temperature == 0.0 || !(w.scalars.beta >= 0.0 && w.scalars.beta <= 1.0))
      return "temperature must be nonzero and beta in [0, 1]";
    if (w.vocab < options_.shards)
      return fmt::format("{} shards for a vocabulary of {} (at most one shard per vocabulary row)",
                         options_.shards, w.vocab);
    return std::nullopt;
  }

  void poison_outputs() override {
    require_prepared();
    poison(grad_input_, grad_weight_, grad_bias_, loss_);
    host_loss_ = std::numeric_limits<double>::quiet_NaN();
  }

  // Pass::backward runs the full pass: G' needs the forward's statistics.
  void run(Pass pass) override {
    require_prepared();
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    const bool grads = pass != Pass::forward;
    gpu::count_valid_tokens(in.target.data(), w.tokens, w.vocab, w.scalars.ignore_index,
                                   token_count_.data(), stream());
    if (grads)
      gpu::fused::sort_targets(in.target.data(), w.tokens, w.vocab, w.scalars.ignore_index,
                               target_order_.order(), stream());
    for (vocab_parallel::ShardWork &s : shards_)
      s.copy_bias_slices(in.has_student_bias() ? in.student_bias.data() : nullptr,
                         in.has_teacher_bias() ? in.teacher_bias.data() : nullptr, device(), device(),
                         stream());
    for (std::int64_t c = 0; c < plan_.chunks; ++c) {
      const std::int64_t begin = c * plan_.rows;
      run_chunk(begin, std::min(plan_.rows, w.tokens - begin), grads);
    }
    if (grads) {
      // Each shard's rows of grad W (and grad b): the one-hot term of the
      // targets it holds, then divided by N and rounded once.
      for (vocab_parallel::ShardWork &s : shards_) {
        const vocab_parallel::VocabShard &v = s.layout().shard;
        s.finish(target_order_.order(), w.tokens, token_count_.data(),
                 grad_weight_.data() + v.begin * w.student_hidden,
                 grad_bias_.empty() ? nullptr : grad_bias_.data() + v.begin, stream());
      }
    }
    gpu::sum_row_losses(row_loss_.data(), w.tokens, token_count_.data(), loss_.data(), stream());
    has_gradients_ = grads;
  }

  OutputView outputs() override {
    require_prepared();
    stream().synchronize();
    CUDA_CHECK(cudaMemcpy(&host_loss_, loss_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return output_view(host_loss_, has_gradients_, grad_input_, grad_weight_, grad_bias_);
  }

  // The shard count and each shard's vocabulary rows (columns of the
  // logits), and the chunking.
  [[nodiscard]] json::Object run_labels() const override {
    require_prepared();
    json::Object labels;
    labels.set("vocab_shards", std::to_string(plan_.shards.size()));
    for (const ShardLayout &s : plan_.shards)
      labels.set(fmt::format("shard_{}_columns", s.shard.rank),
                 fmt::format("[{}, {})", s.shard.begin, s.shard.end));
    labels.set("shard_execution", "serial on one GPU, local device communicator");
    labels.set("chunk_rows", std::to_string(plan_.rows));
    labels.set("chunks", std::to_string(plan_.chunks));
    return labels;
  }

private:
  [[nodiscard]] std::uint64_t chunk_budget() const {
    return options_.chunk_budget != 0 ? options_.chunk_budget : vocab_parallel::kDefaultChunkBudget;
  }

  void prepare_device(const Workload &w) override {
    plan_ = vocab_parallel::plan_emulation(w.tokens, w.vocab, w.student_hidden, options_.shards,
                                           options_.chunk_rows, chunk_budget());
    const std::int64_t T = w.tokens, V = w.vocab, Hs = w.student_hidden, R = plan_.rows;
    blas_ = std::make_unique<gpu::CublasLt>(allocator(), gpu::fused::kCublasWorkspaceBytes);

    grad_input_ = DeviceBuffer<bf16>(allocator(), count(T * Hs), MemoryTag::output);
    grad_weight_ = DeviceBuffer<bf16>(allocator(), count(V * Hs), MemoryTag::output);
    if (w.student_bias) grad_bias_ = DeviceBuffer<float>(allocator(), count(V), MemoryTag::output);
    loss_ = DeviceBuffer<double>(allocator(), 1, MemoryTag::output);
    row_loss_ = DeviceBuffer<float>(allocator(), count(T));
    token_count_ = DeviceBuffer<gpu::TokenCount>(allocator(), 1);
    target_order_ = gpu::fused::TargetOrderBuffers(allocator(), T, gpu::fused::target_sort_temp_bytes(T, V));
    shards_.reserve(plan_.shards.size());
    for (const ShardLayout &layout : plan_.shards) shards_.emplace_back(layout, w, R, allocator());
    if (w.student_bias) ones_ = gpu::bf16_ones(allocator(), count(R));
    const gpu::DeviceInputs &in = inputs();
    for (vocab_parallel::ShardWork &s : shards_) {
      const std::int64_t b = s.layout().shard.begin;
      s.bind({.student_input = in.student_input.data(),
              .teacher_input = in.teacher_input.data(),
              .target = in.target.data(),
              .student_weight = in.student_weight.data() + b * Hs,
              .teacher_weight = in.teacher_weight.data() + b * w.hidden,
              .ones = ones_.empty() ? nullptr : ones_.data()});
    }
  }

  void release_device() override {
    shards_.clear();
    for (auto *buffer : {&grad_input_, &grad_weight_, &ones_}) buffer->reset();
    for (auto *buffer : {&grad_bias_, &row_loss_}) buffer->reset();
    loss_.reset();
    token_count_.reset();
    target_order_ = {};
    plan_ = {};
    blas_.reset();
    has_gradients_ = false;
  }

  // Every shard's operand of one collective, on the one stream.
  template <class Operand> std::vector<vocab_parallel::RankBuffer> operands(Operand operand) {
    std::vector<vocab_parallel::RankBuffer> out;
    for (vocab_parallel::ShardWork &s : shards_) out.push_back({operand(s), stream()});
    return out;
  }

  // Token rows [begin, begin + rows) through every shard, the collectives
  // between the phases (emulated_implementation.hpp).
  void run_chunk(std::int64_t begin, std::int64_t rows, bool grads) {
    const Workload &w = workload();
    using vocab_parallel::ShardWork;
    for (ShardWork &s : shards_) {
      s.logits(begin, rows, *blas_, stream());
      vocab_parallel::shard_row_maxima(s.row_args(begin, rows), stream());
    }
    communicator_.all_reduce_max(operands([&](ShardWork &s) { return s.maxima(rows); }));
    for (ShardWork &s : shards_) vocab_parallel::shard_row_sums(s.row_args(begin, rows), stream());
    communicator_.all_reduce_sum(operands([&](ShardWork &s) { return s.sums(rows); }));
    for (ShardWork &s : shards_) vocab_parallel::shard_row_kl(s.row_args(begin, rows), stream());
    communicator_.all_reduce_sum(operands([&](ShardWork &s) { return s.kl(rows); }));
    // Every rank now has every row's loss term; rank 0's copy is written.
    vocab_parallel::shard_row_loss_terms(shards_.front().row_args(begin, rows), row_loss_.data() + begin,
                                         stream());
    if (!grads) return;
    for (ShardWork &s : shards_) {
      vocab_parallel::shard_row_gradient(s.row_args(begin, rows), stream());
      s.grad_input_partial(begin, rows, *blas_, stream());
      s.grad_weight(begin, rows, *blas_, stream());
    }
    communicator_.all_reduce_sum(operands([&](ShardWork &s) { return s.grad_input(rows); }));
    const std::int64_t Hs = w.student_hidden;
    gpu::fused::scale_to_bf16(shards_.front().grad_input(rows).data(), grad_input_.data() + begin * Hs,
                              rows * Hs, token_count_.data(), stream());
  }

  VocabParallelEmulationOptions options_;
  vocab_parallel::LocalDeviceCommunicator communicator_;
  EmulationPlan plan_;
  bool has_gradients_ = false;
  double host_loss_ = std::numeric_limits<double>::quiet_NaN();

  std::unique_ptr<gpu::CublasLt> blas_;
  std::vector<vocab_parallel::ShardWork> shards_;
  DeviceBuffer<bf16> grad_input_;  // output [T, Hs]
  DeviceBuffer<bf16> grad_weight_; // output [V, Hs]
  DeviceBuffer<float> grad_bias_;  // output [V], fp32
  DeviceBuffer<double> loss_;      // output
  DeviceBuffer<float> row_loss_;   // [T]
  DeviceBuffer<bf16> ones_;        // [R] for grad b as a GEMM
  DeviceBuffer<gpu::TokenCount> token_count_;
  gpu::fused::TargetOrderBuffers target_order_; // the targets in sorted order, for grad W's one-hot term
};

} // namespace

std::string vocab_parallel_emulation_name(int shards) {
  return fmt::format("fused-vp{}-emulated", shards);
}

std::unique_ptr<Implementation> make_vocab_parallel_emulated(VocabParallelEmulationOptions options) {
  return std::make_unique<VocabParallelEmulation>(std::move(options));
}

} // namespace kibench
