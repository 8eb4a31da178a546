// The single-GPU emulation of the vocabulary-parallel fused loss
// (emulated_implementation.hpp has the data flow). Every rank's buffers are
// its own allocations, every collective goes through DeviceCommunicator,
// and the ranks run one after another on the one stream: what a rank reads
// of another rank is only ever what an all-reduce handed it.
#include "kernels/vocab_parallel/emulated_implementation.hpp"

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
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/fused/chunk_plan.hpp"
#include "kernels/fused/loss_sum.hpp"
#include "kernels/fused/one_hot.hpp"
#include "kernels/fused/scaled_convert.hpp"
#include "kernels/fused/token_count.hpp"
#include "kernels/vocab_parallel/device_communicator.hpp"
#include "kernels/vocab_parallel/emulation_plan.hpp"
#include "kernels/vocab_parallel/shard_one_hot.hpp"
#include "kernels/vocab_parallel/shard_row_loss.hpp"

namespace kibench {

namespace {

using gpu::DeviceBuffer;
using gpu::MemoryTag;
using vocab_parallel::EmulationPlan;
using vocab_parallel::ShardLayout;
using bf16 = __nv_bfloat16;

constexpr std::uint64_t kDefaultChunkBudget = std::uint64_t{2} << 30;
constexpr std::uint16_t kBf16One = 0x3F80;

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

// What one rank holds on the device.
struct Shard {
  ShardLayout layout;
  DeviceBuffer<bf16> student_logits; // [R, ld]: z_s,r, then G'_r
  DeviceBuffer<bf16> teacher_logits; // [R, ld]: z_t,r
  DeviceBuffer<float> maxima;        // [R, 3]
  DeviceBuffer<float> sums;          // [R, 4]
  DeviceBuffer<float> kl;            // [R, 2]
  DeviceBuffer<float> grad_input;    // [R, Hs]: this rank's part of grad x, then the sum over ranks
  DeviceBuffer<float> grad_weight;   // [size, Hs]: Σ over chunks of G'_rᵀ x_s
  DeviceBuffer<float> grad_bias;     // [size]: Σ over chunks of G'_r's column sums; empty without a bias
  // The rank's slices of b_s and b_t, [size] (empty without biases): its
  // own allocations, so the logit GEMMs' bias epilogue reads a 256-byte
  // aligned vector as it does in `fused` (b_s + b_r need not be aligned).
  DeviceBuffer<bf16> student_bias, teacher_bias;
};

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
                          .source_path = "kernels/vocab_parallel/emulated_implementation.cpp",
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
    gpu::fused::count_valid_tokens(in.target.data(), w.tokens, w.vocab, w.scalars.ignore_index,
                                   token_count_.data(), stream());
    if (grads)
      gpu::fused::sort_targets(in.target.data(), w.tokens, w.vocab, w.scalars.ignore_index, order_, stream());
    for (Shard &s : shards_) copy_bias_slices(s);
    for (std::int64_t c = 0; c < plan_.chunks; ++c) {
      const std::int64_t begin = c * plan_.rows;
      run_chunk(begin, std::min(plan_.rows, w.tokens - begin), grads);
    }
    if (grads) {
      // Each shard's rows of grad W (and grad b): the one-hot term of the
      // targets it holds, then divided by N and rounded once.
      const std::int64_t Hs = w.student_hidden;
      for (Shard &s : shards_) {
        const vocab_parallel::VocabShard &v = s.layout.shard;
        vocab_parallel::subtract_shard_one_hot_weight(
            order_, w.tokens, v.begin, v.end, in.student_input.data(), Hs,
            static_cast<float>(w.scalars.weight_hard), s.grad_weight.data(),
            s.grad_bias.empty() ? nullptr : s.grad_bias.data(), stream());
        gpu::fused::scale_to_bf16(s.grad_weight.data(), grad_weight_.data() + v.begin * Hs, v.size() * Hs,
                                  token_count_.data(), stream());
        if (!grad_bias_.empty())
          CUDA_CHECK(cudaMemcpyAsync(grad_bias_.data() + v.begin, s.grad_bias.data(),
                                     count(v.size()) * sizeof(float), cudaMemcpyDeviceToDevice, stream()));
      }
      if (!grad_bias_.empty())
        gpu::fused::scale_in_place(grad_bias_.data(), w.vocab, token_count_.data(), stream());
    }
    gpu::fused::sum_row_losses(row_loss_.data(), w.tokens, token_count_.data(), loss_.data(), stream());
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
    return options_.chunk_budget != 0 ? options_.chunk_budget : kDefaultChunkBudget;
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
    token_count_ = DeviceBuffer<gpu::fused::TokenCount>(allocator(), 1);
    for (auto *buffer : {&sort_keys_, &sort_tokens_, &sorted_keys_, &sorted_tokens_})
      *buffer = DeviceBuffer<std::int32_t>(allocator(), count(T));
    // Never empty: a null scratch pointer would make the sort a size query.
    sort_temp_ = DeviceBuffer<std::byte>(allocator(),
                                         std::max<std::size_t>(gpu::fused::target_sort_temp_bytes(T, V), 1));
    order_ = {sort_keys_.data(),     sort_tokens_.data(), sorted_keys_.data(),
              sorted_tokens_.data(), sort_temp_.data(),   sort_temp_.bytes()};
    shards_.reserve(plan_.shards.size());
    for (const ShardLayout &layout : plan_.shards) {
      Shard &s = shards_.emplace_back();
      s.layout = layout;
      const std::int64_t size = layout.shard.size();
      s.student_logits = DeviceBuffer<bf16>(allocator(), count(R * layout.ld));
      s.teacher_logits = DeviceBuffer<bf16>(allocator(), count(R * layout.ld));
      s.maxima = DeviceBuffer<float>(allocator(), count(R * vocab_parallel::kMaximumSlots));
      s.sums = DeviceBuffer<float>(allocator(), count(R * vocab_parallel::kSumSlots));
      s.kl = DeviceBuffer<float>(allocator(), count(R * vocab_parallel::kKlSlots));
      s.grad_input = DeviceBuffer<float>(allocator(), count(R * Hs));
      s.grad_weight = DeviceBuffer<float>(allocator(), count(size * Hs));
      if (w.student_bias) s.grad_bias = DeviceBuffer<float>(allocator(), count(size));
      if (w.student_bias) s.student_bias = DeviceBuffer<bf16>(allocator(), count(size));
      if (w.teacher_bias) s.teacher_bias = DeviceBuffer<bf16>(allocator(), count(size));
    }
    if (w.student_bias) {
      ones_ = DeviceBuffer<bf16>(allocator(), count(R));
      const std::vector<std::uint16_t> host(count(R), kBf16One);
      CUDA_CHECK(cudaMemcpy(ones_.data(), host.data(), ones_.bytes(), cudaMemcpyHostToDevice));
    }
  }

  void release_device() override {
    shards_.clear();
    for (auto *buffer : {&grad_input_, &grad_weight_, &ones_}) buffer->reset();
    for (auto *buffer : {&grad_bias_, &row_loss_}) buffer->reset();
    loss_.reset();
    token_count_.reset();
    for (auto *buffer : {&sort_keys_, &sort_tokens_, &sorted_keys_, &sorted_tokens_}) buffer->reset();
    sort_temp_.reset();
    order_ = {};
    plan_ = {};
    blas_.reset();
    has_gradients_ = false;
  }

  // Rows [b, e) of b_s and b_t into the shard's own slices.
  void copy_bias_slices(Shard &s) {
    const gpu::DeviceInputs &in = inputs();
    const std::int64_t b = s.layout.shard.begin;
    for (auto [slice, whole] :
         {std::pair{&s.student_bias, &in.student_bias}, std::pair{&s.teacher_bias, &in.teacher_bias}}) {
      if (slice->empty()) continue;
      if (whole->size() < count(b) + slice->size())
        throw std::logic_error(fmt::format("{}: bias of {} elements for shard rows [{}, {})", options_.name,
                                           whole->size(), b, s.layout.shard.end));
      CUDA_CHECK(cudaMemcpyAsync(slice->data(), whole->data() + b, slice->bytes(), cudaMemcpyDeviceToDevice,
                                 stream()));
    }
  }

  // Shard s's arguments to the row kernels for token rows [begin, begin + rows).
  [[nodiscard]] vocab_parallel::ShardRowArgs row_args(Shard &s, std::int64_t begin, std::int64_t rows) const {
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    vocab_parallel::ShardRowArgs a;
    a.student_logits = s.student_logits.data();
    a.teacher_logits = s.teacher_logits.data();
    a.rows = rows;
    a.columns = s.layout.shard.size();
    a.ld = s.layout.ld;
    a.column_begin = s.layout.shard.begin;
    a.vocab = w.vocab;
    a.target = in.target.data() + begin;
    a.student_input = in.student_input.data() + begin * w.student_hidden;
    a.student_weight = in.student_weight.data();
    a.student_bias = s.student_bias.empty() ? nullptr : s.student_bias.data();
    a.student_hidden = w.student_hidden;
    a.maxima = s.maxima.data();
    a.sums = s.sums.data();
    a.kl = s.kl.data();
    a.beta = w.scalars.beta;
    a.temperature = w.scalars.temperature;
    a.weight_hard = w.scalars.weight_hard;
    a.weight_soft = w.scalars.weight_soft;
    a.ignore_index = w.scalars.ignore_index;
    return a;
  }

  // Every shard's first `elements` of one of its buffers: the all-reduce's operands.
  std::vector<std::span<float>> spans(DeviceBuffer<float> Shard::*member, std::int64_t elements) {
    std::vector<std::span<float>> out;
    for (Shard &s : shards_) out.emplace_back((s.*member).data(), count(elements));
    return out;
  }

  // Shard s's logit slices for token rows [begin, begin + rows):
  //   z_s,r [rows, ld] = x_s[begin:, :Hs] · W_s[b:e, :Hs]ᵀ (+ b_s[b:e], the shard's slice)
  //   z_t,r [rows, ld] = x_t[begin:, :H]  · W_t[b:e, :H]ᵀ  (+ b_t[b:e], the shard's slice)
  // A = x rows (lda = Hs or H), B = the shard's W rows (ldb = Hs or H, the
  // GEMM reads them transposed), C row stride ld ≥ e − b.
  void enqueue_logits(Shard &s, std::int64_t begin, std::int64_t rows) {
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    const std::int64_t H = w.hidden, Hs = w.student_hidden;
    const std::int64_t b = s.layout.shard.begin, columns = s.layout.shard.size();
    gpu::RowMajorGemm student = gpu::gemm_abt(rows, columns, Hs, in.student_input.data() + begin * Hs,
                                              in.student_weight.data() + b * Hs, s.student_logits.data());
    student.ldc = s.layout.ld;
    student.bias = s.student_bias.empty() ? nullptr : s.student_bias.data();
    gpu::matmul_aligned(*blas_, student, stream());
    gpu::RowMajorGemm teacher = gpu::gemm_abt(rows, columns, H, in.teacher_input.data() + begin * H,
                                              in.teacher_weight.data() + b * H, s.teacher_logits.data());
    teacher.ldc = s.layout.ld;
    teacher.bias = s.teacher_bias.empty() ? nullptr : s.teacher_bias.data();
    gpu::matmul_aligned(*blas_, teacher, stream());
  }

  // Shard s's gradient GEMMs from G'_r [rows, ld] (columns [0, e − b)):
  //   grad x partial [rows, Hs] fp32 = G'_r · W_s[b:e]         (B [e − b, Hs], ldb = Hs)
  //   grad W_s,r [e − b, Hs] fp32 (+)= G'_rᵀ · x_s[begin:]      (B [rows, Hs], ldb = Hs)
  //   grad b_s,r [1, e − b] fp32 (+)= 1[1, rows] · G'_r
  // the accumulating ones with beta = 0 on the first chunk, 1 after.
  void enqueue_gradients(Shard &s, std::int64_t begin, std::int64_t rows) {
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    const std::int64_t Hs = w.student_hidden;
    const std::int64_t b = s.layout.shard.begin, columns = s.layout.shard.size();
    const bf16 *g = s.student_logits.data();
    const double beta = begin == 0 ? 0.0 : 1.0;

    gpu::RowMajorGemm dx =
        gpu::gemm_ab(rows, Hs, columns, g, in.student_weight.data() + b * Hs, s.grad_input.data());
    dx.lda = s.layout.ld;
    dx.output_type = ElementType::fp32;
    gpu::matmul_aligned(*blas_, dx, stream());

    gpu::RowMajorGemm dw =
        gpu::gemm_atb(columns, Hs, rows, g, in.student_input.data() + begin * Hs, s.grad_weight.data());
    dw.lda = s.layout.ld;
    dw.output_type = ElementType::fp32;
    dw.beta = beta;
    gpu::matmul_aligned(*blas_, dw, stream());

    if (!s.grad_bias.empty()) {
      gpu::RowMajorGemm db = gpu::gemm_ab(1, columns, rows, ones_.data(), g, s.grad_bias.data());
      db.ldb = s.layout.ld;
      db.output_type = ElementType::fp32;
      db.beta = beta;
      gpu::matmul_aligned(*blas_, db, stream());
    }
  }

  // Token rows [begin, begin + rows) through every shard, the collectives
  // between the phases (emulated_implementation.hpp).
  void run_chunk(std::int64_t begin, std::int64_t rows, bool grads) {
    const Workload &w = workload();
    for (Shard &s : shards_) {
      enqueue_logits(s, begin, rows);
      vocab_parallel::shard_row_maxima(row_args(s, begin, rows), stream());
    }
    communicator_.all_reduce_max(spans(&Shard::maxima, rows * vocab_parallel::kMaximumSlots), stream());
    for (Shard &s : shards_) vocab_parallel::shard_row_sums(row_args(s, begin, rows), stream());
    communicator_.all_reduce_sum(spans(&Shard::sums, rows * vocab_parallel::kSumSlots), stream());
    for (Shard &s : shards_) vocab_parallel::shard_row_kl(row_args(s, begin, rows), stream());
    communicator_.all_reduce_sum(spans(&Shard::kl, rows * vocab_parallel::kKlSlots), stream());
    // Every rank now has every row's loss term; rank 0's copy is written.
    vocab_parallel::shard_row_loss_terms(row_args(shards_.front(), begin, rows), row_loss_.data() + begin,
                                         stream());
    if (!grads) return;
    const std::int64_t Hs = w.student_hidden;
    const gpu::DeviceInputs &in = inputs();
    for (Shard &s : shards_) {
      vocab_parallel::shard_row_gradient(row_args(s, begin, rows), stream());
      enqueue_gradients(s, begin, rows);
      // The rank holding y_i adds the one-hot term of grad x row i.
      vocab_parallel::subtract_shard_one_hot_input(s.grad_input.data(), in.target.data() + begin, rows,
                                                   w.vocab, w.scalars.ignore_index, s.layout.shard.begin,
                                                   s.layout.shard.end, in.student_weight.data(), Hs,
                                                   static_cast<float>(w.scalars.weight_hard), stream());
    }
    communicator_.all_reduce_sum(spans(&Shard::grad_input, rows * Hs), stream());
    gpu::fused::scale_to_bf16(shards_.front().grad_input.data(), grad_input_.data() + begin * Hs, rows * Hs,
                              token_count_.data(), stream());
  }

  VocabParallelEmulationOptions options_;
  vocab_parallel::LocalDeviceCommunicator communicator_;
  EmulationPlan plan_;
  bool has_gradients_ = false;
  double host_loss_ = std::numeric_limits<double>::quiet_NaN();

  std::unique_ptr<gpu::CublasLt> blas_;
  std::vector<Shard> shards_;
  DeviceBuffer<bf16> grad_input_;  // output [T, Hs]
  DeviceBuffer<bf16> grad_weight_; // output [V, Hs]
  DeviceBuffer<float> grad_bias_;  // output [V], fp32
  DeviceBuffer<double> loss_;      // output
  DeviceBuffer<float> row_loss_;   // [T]
  DeviceBuffer<bf16> ones_;        // [R] for grad b as a GEMM
  DeviceBuffer<gpu::fused::TokenCount> token_count_;
  DeviceBuffer<std::int32_t> sort_keys_, sort_tokens_, sorted_keys_, sorted_tokens_; // [T]
  DeviceBuffer<std::byte> sort_temp_;
  gpu::fused::TargetOrder order_; // the targets in sorted order, for grad W's one-hot term
};

} // namespace

std::string vocab_parallel_emulation_name(int shards) {
  return fmt::format("fused-vp{}-emulated", shards);
}

std::unique_ptr<Implementation> make_vocab_parallel_emulated(VocabParallelEmulationOptions options) {
  return std::make_unique<VocabParallelEmulation>(std::move(options));
}

} // namespace kibench
