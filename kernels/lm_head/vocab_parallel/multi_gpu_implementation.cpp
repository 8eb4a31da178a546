// `fused-vocab-parallel` (multi_gpu_implementation.hpp has the data flow).
// One host thread drives every rank: each rank's work is enqueued on its
// own stream with its device current (DeviceGuard), and the collectives
// are NCCL groups over all ranks' streams, so no rank waits on the host.
#include "kernels/lm_head/vocab_parallel/multi_gpu_implementation.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cuda/bf16_ones.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_fit.hpp"
#include "kernels/cuda/device_guard.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/gpu_device.hpp"
#include "kernels/cuda/nccl.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/common/loss_sum.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"
#include "kernels/lm_head/fused/scaled_convert.hpp"
#include "kernels/lm_head/fused/target_order_buffers.hpp"
#include "kernels/common/token_count.hpp"
#include "kernels/lm_head/vocab_parallel/emulation_plan.hpp"
#include "kernels/lm_head/vocab_parallel/nccl_communicator.hpp"
#include "kernels/lm_head/vocab_parallel/shard_row_loss.hpp"
#include "kernels/lm_head/vocab_parallel/shard_work.hpp"

namespace kibench {

namespace {

using gpu::DeviceAllocator;
using gpu::DeviceBuffer;
using gpu::DeviceGuard;
using gpu::MemoryTag;
using vocab_parallel::EmulationPlan;
using vocab_parallel::ShardLayout;
using vocab_parallel::ShardWork;
using bf16 = __nv_bfloat16;

std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

// Everything one rank holds, on its device. Members are destroyed in
// reverse order: the allocators (first) outlive every buffer.
struct Rank {
  explicit Rank(int device_, int rank)
      : device(device_), allocator(fmt::format("{}-rank{}", kVocabParallelName, rank)) {}

  int device;
  DeviceAllocator allocator;         // the rank's inputs (replicas, shards), outputs and workspace
  std::optional<gpu::Stream> stream;
  // grad x's all-reduce runs here, beside the grad W GEMMs on `stream`:
  // it waits for `partial_ready` (grad x partial written), and `stream`
  // waits for `reduced` before the buffer is written again.
  std::optional<gpu::Stream> reduce_stream;
  std::optional<gpu::Event> partial_ready, reduced;
  std::unique_ptr<gpu::CublasLt> blas;
  // Replicas of x_s, x_t and y (ranks past 0; rank 0 reads device 0's
  // inputs), and the shard's rows of W_s and W_t.
  DeviceBuffer<bf16> student_input, teacher_input;
  DeviceBuffer<std::int64_t> target;
  DeviceBuffer<bf16> student_weight, teacher_weight;
  DeviceBuffer<bf16> ones; // [R] (bias only)
  DeviceBuffer<gpu::TokenCount> token_count;
  gpu::fused::TargetOrderBuffers target_order; // the targets in sorted order, for the one-hot term
  std::optional<ShardWork> work;
  DeviceBuffer<bf16> grad_weight; // output: the shard's rows of grad W_s, [size, Hs] bf16
  DeviceBuffer<float> grad_bias;  // output: its rows of grad b_s, [size] fp32 (bias only)
};

class VocabParallelMultiGpu final : public Implementation {
public:
  explicit VocabParallelMultiGpu(VocabParallelOptions options)
      : options_(std::move(options)), gather_allocator_(options_.name + "-gathered-for-check") {
    if (options_.gpus < 1)
      throw std::invalid_argument(fmt::format("{}: {} GPUs (at least 1)", options_.name, options_.gpus));
  }
  ~VocabParallelMultiGpu() override {
    release();
    destroy_communicator();
  }
  VocabParallelMultiGpu(const VocabParallelMultiGpu &) = delete;
  VocabParallelMultiGpu &operator=(const VocabParallelMultiGpu &) = delete;

  [[nodiscard]] std::string name() const override { return options_.name; }
  [[nodiscard]] bool needs_gpu() const override { return true; }
  [[nodiscard]] bool computes_loss() const override { return options_.collectives; }

  [[nodiscard]] RevisionFacts revision() const override {
    const std::string title =
        fmt::format("kibench fused distillation loss, vocabulary-parallel over {} GPU{} through NCCL (CUDA)",
                    options_.gpus, options_.gpus == 1 ? "" : "s");
    const std::string description = fmt::format(
        "The LM heads cut along the vocabulary into {} shards (sizes within one row), one per GPU, each "
        "GPU holding its rows of W_s and W_t and replicas of x_s, x_t and the targets. Per token chunk each "
        "GPU computes its slice of both logit matrices (cuBLASLt, bf16) and per-row partial statistics; "
        "row maxima, sums of exponentials with the target logit, and KL partial sums are combined by NCCL "
        "all-reduces (one process, every rank's call in one NCCL group); each GPU then writes its slice of "
        "the gradient row and runs its gradient GEMMs. grad x is an all-reduce sum, left on GPU 0 with the "
        "loss; grad W and grad b stay sharded. Chunk rows: {}.{}",
        options_.gpus,
        options_.chunk_rows > 0 ? fmt::format("{} (fixed)", options_.chunk_rows)
                                : fmt::format("the most whose buffers fit {} bytes a GPU", chunk_budget()),
        options_.collectives ? ""
                             : " Compute only: the all-reduces are skipped, so this computes no loss; timed "
                               "beside the real pass it gives the collectives' share.");
    return cuda_revision({.name = options_.name,
                          .title = title,
                          .description = description,
                          .source_path = "kernels/lm_head/vocab_parallel/multi_gpu_implementation.cpp",
                          .symbol = "kibench::make_vocab_parallel"});
  }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    if (!gpu::gpu_available()) return fmt::format("no GPU: {}", gpu::gpu_availability().reason);
    if (const int have = gpu::gpu_availability().device_count; have < options_.gpus)
      return fmt::format("{} GPUs asked for (--gpus), {} present", options_.gpus, have);
    std::string why;
    if (gpu::Nccl::find(why) == nullptr) return why;
    if (w.dtype != FloatType::bf16) return fmt::format("{} computes bf16 workloads only", options_.name);
    if (w.scalars.temperature == 0.0 || !(w.scalars.beta >= 0.0 && w.scalars.beta <= 1.0))
      return "temperature must be nonzero and beta in [0, 1]";
    if (w.vocab < options_.gpus)
      return fmt::format("{} GPUs for a vocabulary of {} (at most one shard per vocabulary row)",
                         options_.gpus, w.vocab);
    return std::nullopt;
  }

  void prepare(const Workload &workload, InputSet &input_set) override {
    release();
    workload_ = &workload;
    inputs_ = &gpu::device_inputs(input_set);
    try {
      prepare_ranks();
    } catch (...) {
      release();
      throw;
    }
  }

  void poison_outputs() override {
    require_prepared();
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      poison(*rank, rank->grad_weight.data(), rank->grad_weight.bytes());
      poison(*rank, rank->grad_bias.data(), rank->grad_bias.bytes());
    }
    Rank &root = *ranks_.front();
    DeviceGuard guard(root.device);
    poison(root, grad_input_.data(), grad_input_.bytes());
    poison(root, loss_.data(), loss_.bytes());
    poison(root, gathered_weight_.data(), gathered_weight_.bytes());
    poison(root, gathered_bias_.data(), gathered_bias_.bytes());
    host_loss_ = std::numeric_limits<double>::quiet_NaN();
  }

  // Pass::backward runs the full pass: G' needs the forward's statistics.
  void run(Pass pass) override {
    require_prepared();
    const Workload &w = *workload_;
    const bool grads = pass != Pass::forward;
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      const std::int64_t *target = rank_inputs(*rank).target;
      gpu::count_valid_tokens(target, w.tokens, w.vocab, w.scalars.ignore_index,
                                     rank->token_count.data(), *rank->stream);
      if (grads)
        gpu::fused::sort_targets(target, w.tokens, w.vocab, w.scalars.ignore_index,
                                 rank->target_order.order(), *rank->stream);
    }
    for (std::int64_t c = 0; c < plan_.chunks; ++c) {
      const std::int64_t begin = c * plan_.rows;
      run_chunk(begin, std::min(plan_.rows, w.tokens - begin), grads);
    }
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      if (grads)
        rank->work->finish(rank->target_order.order(), w.tokens, rank->token_count.data(),
                           rank->grad_weight.data(),
                           rank->grad_bias.empty() ? nullptr : rank->grad_bias.data(), *rank->stream);
    }
    Rank &root = *ranks_.front();
    DeviceGuard guard(root.device);
    gpu::sum_row_losses(row_loss_.data(), w.tokens, root.token_count.data(), loss_.data(),
                               *root.stream);
    has_gradients_ = grads;
  }

  // Gathers grad W_s and grad b_s from every rank to device 0 (untimed:
  // the check reads them there), then waits for everything.
  OutputView outputs() override {
    require_prepared();
    const Workload &w = *workload_;
    Rank &root = *ranks_.front();
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      rank->stream->synchronize();
    }
    communicator_->check_async_errors();
    if (has_gradients_) {
      DeviceGuard guard(root.device);
      for (auto &rank : ranks_) {
        const vocab_parallel::VocabShard &v = rank->work->layout().shard;
        CUDA_CHECK(cudaMemcpyPeerAsync(gathered_weight_.data() + v.begin * w.student_hidden, root.device,
                                       rank->grad_weight.data(), rank->device, rank->grad_weight.bytes(),
                                       *root.stream));
        if (!rank->grad_bias.empty())
          CUDA_CHECK(cudaMemcpyPeerAsync(gathered_bias_.data() + v.begin, root.device, rank->grad_bias.data(),
                                         rank->device, rank->grad_bias.bytes(), *root.stream));
      }
      root.stream->synchronize();
    }
    CUDA_CHECK(cudaMemcpy(&host_loss_, loss_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    OutputView view;
    view.loss = host_loss_;
    if (!has_gradients_) return view;
    view.grad_student_input = grad_input_.view();
    view.grad_student_weight = gathered_weight_.view();
    if (!gathered_bias_.empty()) view.grad_student_bias = gathered_bias_.view();
    return view;
  }

  // Inputs: device 0's shared copy and every rank's replicas and shards;
  // outputs: grad x and the loss on device 0 and each rank's grad W (b)
  // rows; workspace: the rest of the ranks' high-water marks. The copies
  // gathered for the check are not counted.
  [[nodiscard]] MemoryUse memory() const override {
    MemoryUse use;
    if (inputs_ == nullptr) return use;
    use.input_bytes = inputs_->bytes();
    std::uint64_t peaks = 0;
    for (const auto &rank : ranks_) {
      use.input_bytes += rank->allocator.live_bytes(MemoryTag::input);
      use.output_bytes += rank->allocator.live_bytes(MemoryTag::output);
      peaks += rank->allocator.peak_bytes();
    }
    use.peak_bytes = inputs_->bytes() + peaks;
    use.workspace_bytes = use.peak_bytes - use.input_bytes - use.output_bytes;
    return use;
  }

  [[nodiscard]] json::Object run_labels() const override {
    require_prepared();
    json::Object labels;
    labels.set("parallel_layout",
               fmt::format("vocabulary-parallel over {} GPUs (devices 0-{}), one process, NCCL {}",
                           ranks_.size(), ranks_.size() - 1, gpu::Nccl::instance().version()));
    labels.set("nccl_library", gpu::Nccl::instance().path().substr(0, 200));
    for (const auto &rank : ranks_) {
      const vocab_parallel::VocabShard &v = rank->work->layout().shard;
      labels.set(fmt::format("rank_{}", v.rank),
                 fmt::format("device {}: vocabulary rows [{}, {}), peak {} bytes", rank->device, v.begin,
                             v.end, rank->allocator.peak_bytes()));
    }
    labels.set("chunk_rows", std::to_string(plan_.rows));
    labels.set("chunks", std::to_string(plan_.chunks));
    return labels;
  }

  // Every rank's GPU and stream (gpu_device.hpp): the slowest GPU's time
  // between its events, every board's energy, a flush and a load on each.
  std::unique_ptr<Device> open_device() override {
    require_prepared();
    std::vector<gpu::DeviceStream> streams;
    for (const auto &rank : ranks_) streams.push_back({rank->device, rank->stream->get()});
    return std::make_unique<gpu::GpuDevice>(options_.name, std::move(streams), gpu::GpuDevice::Timing::across_gpus);
  }

  void release() override {
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      if (rank->stream) rank->stream->synchronize();
      if (rank->reduce_stream) rank->reduce_stream->synchronize();
    }
    grad_input_.reset();
    loss_.reset();
    row_loss_.reset();
    gathered_weight_.reset();
    gathered_bias_.reset();
    // Each rank's buffers freed with its device current.
    while (!ranks_.empty()) {
      DeviceGuard guard(ranks_.back()->device);
      ranks_.pop_back();
    }
    plan_ = {};
    inputs_ = nullptr;
    workload_ = nullptr;
    has_gradients_ = false;
  }

private:
  void destroy_communicator() {
    if (!communicator_) return;
    // ncclCommDestroy makes each communicator's device current in turn; the
    // guard makes the caller's current again, whichever NCCL is loaded.
    DeviceGuard keep(gpu::current_device());
    communicator_.reset();
    communicator_devices_.clear();
  }

  [[nodiscard]] std::uint64_t chunk_budget() const {
    return options_.chunk_budget != 0 ? options_.chunk_budget : vocab_parallel::kDefaultChunkBudget;
  }

  void require_prepared() const {
    if (inputs_ == nullptr) throw std::logic_error(options_.name + ": used before prepare()");
  }

  static void poison(Rank &rank, void *data, std::size_t bytes) {
    if (bytes != 0) CUDA_CHECK(cudaMemsetAsync(data, 0xFF, bytes, *rank.stream));
  }

  // The inputs rank `rank` reads, on its device.
  [[nodiscard]] vocab_parallel::ShardInputs rank_inputs(Rank &rank) const {
    const bool root = rank.device == ranks_.front()->device;
    return {.student_input = root ? inputs_->student_input.data() : rank.student_input.data(),
            .teacher_input = root ? inputs_->teacher_input.data() : rank.teacher_input.data(),
            .target = root ? inputs_->target.data() : rank.target.data(),
            .student_weight = rank.student_weight.data(),
            .teacher_weight = rank.teacher_weight.data(),
            .ones = rank.ones.empty() ? nullptr : rank.ones.data()};
  }

  // A copy of `count` elements of `source` (device 0) on the rank's device.
  template <class T>
  static DeviceBuffer<T> replica(Rank &rank, const T *source, int source_device, std::int64_t count_of) {
    DeviceBuffer<T> copy(rank.allocator, count(count_of), MemoryTag::input);
    if (!copy.empty())
      CUDA_CHECK(
          cudaMemcpyPeerAsync(copy.data(), rank.device, source, source_device, copy.bytes(), *rank.stream));
    return copy;
  }

  void prepare_ranks() {
    const Workload &w = *workload_;
    const int source = gpu::current_device();
    if (source != 0)
      throw std::logic_error(fmt::format(
          "{}: prepared with device {} current (the inputs must be on device 0)", options_.name, source));
    // Each rank's budget; plan_emulation sizes R against all ranks' buffers together.
    plan_ = vocab_parallel::plan_emulation(w.tokens, w.vocab, w.student_hidden, options_.gpus,
                                           options_.chunk_rows,
                                           chunk_budget() * static_cast<std::uint64_t>(options_.gpus));
    const std::int64_t T = w.tokens, V = w.vocab, H = w.hidden, Hs = w.student_hidden, R = plan_.rows;
    for (const ShardLayout &layout : plan_.shards) {
      const int device = layout.shard.rank;
      // The guard first: if an allocation throws, the half-made rank is
      // destroyed (its streams, events and buffers freed) on its own device.
      DeviceGuard guard(device);
      auto rank = std::make_unique<Rank>(device, layout.shard.rank);
      rank->stream.emplace();
      rank->reduce_stream.emplace();
      rank->partial_ready.emplace(cudaEventDisableTiming);
      rank->reduced.emplace(cudaEventDisableTiming);
      rank->blas = std::make_unique<gpu::CublasLt>(rank->allocator, gpu::fused::kCublasWorkspaceBytes);
      const std::int64_t b = layout.shard.begin, size = layout.shard.size();
      if (device != source) {
        rank->student_input = replica(*rank, inputs_->student_input.data(), source, T * Hs);
        rank->teacher_input = replica(*rank, inputs_->teacher_input.data(), source, T * H);
        rank->target = replica(*rank, inputs_->target.data(), source, T);
      }
      rank->student_weight = replica(*rank, inputs_->student_weight.data() + b * Hs, source, size * Hs);
      rank->teacher_weight = replica(*rank, inputs_->teacher_weight.data() + b * H, source, size * H);
      if (w.student_bias) rank->ones = gpu::bf16_ones(rank->allocator, count(R));
      rank->token_count = DeviceBuffer<gpu::TokenCount>(rank->allocator, 1);
      rank->target_order =
          gpu::fused::TargetOrderBuffers(rank->allocator, T, gpu::fused::target_sort_temp_bytes(T, V));
      rank->work.emplace(layout, w, R, rank->allocator);
      rank->grad_weight = DeviceBuffer<bf16>(rank->allocator, count(size * Hs), MemoryTag::output);
      if (w.student_bias)
        rank->grad_bias = DeviceBuffer<float>(rank->allocator, count(size), MemoryTag::output);
      ranks_.push_back(std::move(rank));
    }
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      rank->work->bind(rank_inputs(*rank));
      rank->work->copy_bias_slices(inputs_->has_student_bias() ? inputs_->student_bias.data() : nullptr,
                                   inputs_->has_teacher_bias() ? inputs_->teacher_bias.data() : nullptr,
                                   source, rank->device, *rank->stream);
    }
    Rank &root = *ranks_.front();
    DeviceGuard guard(root.device);
    grad_input_ = DeviceBuffer<bf16>(root.allocator, count(T * Hs), MemoryTag::output);
    loss_ = DeviceBuffer<double>(root.allocator, 1, MemoryTag::output);
    row_loss_ = DeviceBuffer<float>(root.allocator, count(T));
    gathered_weight_ = DeviceBuffer<bf16>(gather_allocator_, count(V * Hs));
    if (w.student_bias) gathered_bias_ = DeviceBuffer<float>(gather_allocator_, count(V));
    std::vector<int> devices;
    for (const auto &rank : ranks_) devices.push_back(rank->device);
    // The communicator depends on the devices only: kept from one workload
    // to the next (ncclCommInitAll over 8 GPUs takes about a second).
    if (!communicator_ || communicator_devices_ != devices) {
      destroy_communicator();
      communicator_ = std::make_unique<vocab_parallel::NcclCommunicator>(gpu::Nccl::instance(), devices);
      communicator_devices_ = devices;
    }
    for (auto &rank : ranks_) rank->stream->synchronize();
  }

  // Every rank's operand of one collective, on its main stream (or, for
  // grad x, on its reduce stream).
  template <class Operand>
  std::vector<vocab_parallel::RankBuffer> operands(Operand operand, bool on_reduce_stream = false) {
    std::vector<vocab_parallel::RankBuffer> out;
    for (auto &rank : ranks_)
      out.push_back({operand(*rank->work), (on_reduce_stream ? *rank->reduce_stream : *rank->stream).get()});
    return out;
  }

  // Each rank's work between two collectives, its device current.
  template <class Step> void on_every_rank(Step step) {
    for (auto &rank : ranks_) {
      DeviceGuard guard(rank->device);
      step(*rank);
    }
  }

  void run_chunk(std::int64_t begin, std::int64_t rows, bool grads) {
    const Workload &w = *workload_;
    on_every_rank([&](Rank &r) {
      r.work->logits(begin, rows, *r.blas, *r.stream);
      vocab_parallel::shard_row_maxima(r.work->row_args(begin, rows), *r.stream);
    });
    if (options_.collectives)
      communicator_->all_reduce_max(operands([&](ShardWork &s) { return s.maxima(rows); }));
    on_every_rank([&](Rank &r) { vocab_parallel::shard_row_sums(r.work->row_args(begin, rows), *r.stream); });
    if (options_.collectives)
      communicator_->all_reduce_sum(operands([&](ShardWork &s) { return s.sums(rows); }));
    on_every_rank([&](Rank &r) { vocab_parallel::shard_row_kl(r.work->row_args(begin, rows), *r.stream); });
    if (options_.collectives)
      communicator_->all_reduce_sum(operands([&](ShardWork &s) { return s.kl(rows); }));
    Rank &root = *ranks_.front();
    {
      // Every rank now has every row's loss term; rank 0 writes it.
      DeviceGuard guard(root.device);
      vocab_parallel::shard_row_loss_terms(root.work->row_args(begin, rows), row_loss_.data() + begin,
                                           *root.stream);
    }
    if (!grads) return;
    // grad x partial, then its all-reduce on the reduce stream while the
    // grad W (and grad b) GEMMs run on the main one; the main stream waits
    // for the reduced sum (and rank 0's conversion of it) before its next
    // chunk, so the buffer is never written while NCCL reads it, and the
    // timer's stop event, on the main stream, comes after both.
    on_every_rank([&](Rank &r) {
      vocab_parallel::shard_row_gradient(r.work->row_args(begin, rows), *r.stream);
      r.work->grad_input_partial(begin, rows, *r.blas, *r.stream);
      r.partial_ready->record(*r.stream);
      r.reduce_stream->wait(*r.partial_ready);
      r.work->grad_weight(begin, rows, *r.blas, *r.stream);
    });
    if (options_.collectives)
      communicator_->all_reduce_sum(operands([&](ShardWork &s) { return s.grad_input(rows); }, true));
    {
      DeviceGuard guard(root.device);
      const std::int64_t Hs = w.student_hidden;
      gpu::fused::scale_to_bf16(root.work->grad_input(rows).data(), grad_input_.data() + begin * Hs,
                                rows * Hs, root.token_count.data(), *root.reduce_stream);
    }
    on_every_rank([&](Rank &r) {
      r.reduced->record(*r.reduce_stream);
      r.stream->wait(*r.reduced);
    });
  }

  VocabParallelOptions options_;
  DeviceAllocator gather_allocator_; // declared before every buffer: destroyed after them
  const Workload *workload_ = nullptr;
  gpu::DeviceInputs *inputs_ = nullptr;
  EmulationPlan plan_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::unique_ptr<vocab_parallel::NcclCommunicator> communicator_;
  std::vector<int> communicator_devices_;
  DeviceBuffer<bf16> grad_input_;      // output [T, Hs], device 0
  DeviceBuffer<double> loss_;          // output, device 0
  DeviceBuffer<float> row_loss_;       // [T], device 0
  DeviceBuffer<bf16> gathered_weight_; // [V, Hs] on device 0, for the check
  DeviceBuffer<float> gathered_bias_;  // [V] on device 0, for the check
  bool has_gradients_ = false;
  double host_loss_ = std::numeric_limits<double>::quiet_NaN();
};

} // namespace

std::unique_ptr<Implementation> make_vocab_parallel(VocabParallelOptions options) {
  return std::make_unique<VocabParallelMultiGpu>(std::move(options));
}

} // namespace kibench
