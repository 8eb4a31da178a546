// The `fused` implementation: buffers, chunk loop and bookkeeping around the
// row kernel (row_loss.cu). fused_implementation.hpp has the data flow.
//
// Why the gradients leave the GEMMs in fp32 and are divided by N only then:
// the row kernel writes G' = N G (less the one-hot term, one_hot.hpp) in
// bf16, each entry rounded relative to itself whatever N is. Folding 1/N
// into the bf16 rows and again rounding the bf16 GEMM results would round
// twice; when N is no power of two that is up to 2e-3 relative, the whole
// error budget. N lives on the device, so the division happens in the
// fp32 -> bf16 conversions, which round each output element exactly once.
//
// Where grad W accumulates (grad_weight_split.hpp): rows [0, S) in the bf16
// output buffer grad_weight_ read as fp32 (S·Hs floats: 4·S·Hs ≤ 2·V·Hs
// bytes), rows [S, V) in the workspace buffer grad_weight_high_. Each
// chunk's grad W is two GEMMs, one per half, both beta = 0 on the first
// chunk and 1 after. At the end, in stream order:
//  1. the one-hot term, row k addressed through SplitAccumulator;
//  2. the low half to bf16 in place: fp32 element i (float index i, bytes
//     [4i, 4i + 4)) becomes bf16 element i (bytes [2i, 2i + 2)). Stage 0
//     converts [0, n0) into a temporary (the student logit buffer, free by
//     now) and copies it into place; stage k converts [a, 2a), a =
//     n0·2^(k−1), reading bytes [4a, 8a) that nothing has written yet and
//     writing bytes [2a, 4a), which held fp32 elements [a/2, a) that earlier
//     stages converted (scale_to_bf16_in_place, in_place_conversion_stages);
//  3. only then the high half from the workspace into bf16 rows [S, V):
//     their bytes [2·S·Hs, 2·V·Hs) overlap fp32 rows [S/2, S) of the low
//     half, which step 2 has consumed.
// Every element is still rounded once, from its fp32 sum times 1/N.
#include "kernels/lm_head/lm_head_implementation.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_bf16.h>
#include <fmt/format.h>

#include "kernels/builtin_revision.hpp"
#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cuda/aligned_gemm.hpp"
#include "kernels/cuda/bf16_ones.hpp"
#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/gpu_implementation.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/cuda/tuning_labels.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "kernels/lm_head/fused/fp8_teacher.hpp"
#include "kernels/lm_head/fused/grad_weight_split.hpp"
#include "kernels/common/loss_sum.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"
#include "kernels/lm_head/fused/row_loss.hpp"
#include "kernels/lm_head/fused/scaled_convert.hpp"
#include "kernels/lm_head/fused/study_hooks.hpp"
#include "kernels/lm_head/fused/target_order_buffers.hpp"
#include "kernels/common/token_count.hpp"

namespace kibench {

namespace {

using gpu::DeviceAllocator;
using gpu::DeviceBuffer;
using gpu::MemoryTag;
using bf16 = __nv_bfloat16;

// Left free for the driver, cuBLASLt's internal state and the harness.
constexpr std::uint64_t kFreeMemoryMargin = std::uint64_t{512} << 20;

std::uint64_t u64(std::int64_t n) {
  return static_cast<std::uint64_t>(n);
}
std::size_t count(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

bool fp8_teacher(const FusedOptions &options) {
  return options.teacher_precision == TeacherPrecision::fp8_e4m3;
}

// Whether the logit GEMMs may be kibench's own, with row statistics
// (FusedOptions::logit_statistics says where they can run; never beside
// an FP8 teacher GEMM, which writes no statistics).
bool logit_statistics_allowed(const Workload &w, const FusedOptions &options) {
  return options.logit_statistics != LogitStatistics::off && !fp8_teacher(options) &&
         w.scalars.temperature == 1.0 && !w.student_bias && !w.teacher_bias && w.hidden % 8 == 0 &&
         w.student_hidden % 8 == 0;
}

// Asks the GPU (for the sort's scratch size): call with a device present.
gpu::fused::ChunkShape shape_of(const Workload &w, const FusedOptions &options) {
  return {.tokens = w.tokens,
          .vocab = w.vocab,
          .student_hidden = w.student_hidden,
          .student_bias = w.student_bias.has_value(),
          .sort_temp_bytes = gpu::fused::target_sort_temp_bytes(w.tokens, w.vocab),
          .direct_grad_weight = options.plan.direct_single_chunk,
          .logit_statistics = logit_statistics_allowed(w, options),
          .fp8_teacher_hidden = fp8_teacher(options) ? w.hidden : 0,
          .fp8_teacher_bias = fp8_teacher(options) && w.teacher_bias.has_value()};
}

// A shape and the chunk plan prepare() will run it with.
struct PlannedShape {
  gpu::fused::ChunkShape shape;
  gpu::fused::ChunkPlan plan;
};

// grad x_s, grad W_s (bf16), grad b_s (fp32), the loss (fp64).
std::uint64_t output_bytes(const Workload &w) {
  const auto T = u64(w.tokens), V = u64(w.vocab), Hs = u64(w.student_hidden);
  return 2 * T * Hs + 2 * V * Hs + (w.student_bias ? 4 * V : 0) + 8;
}

// "2 GiB", "512 MiB" or bytes, for the revision manifest.
std::string budget_text(std::uint64_t bytes) {
  if (bytes % (std::uint64_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes % (std::uint64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

bool aligned_to(const void *pointer, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

std::uint64_t device_free_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

class FusedImplementation final : public gpu::LmHeadImplementation {
public:
  FusedImplementation(FusedOptions options, FusedStudyHooks hooks)
      : LmHeadImplementation(options.name), options_(std::move(options)), hooks_(hooks) {}
  ~FusedImplementation() override { release(); }


  [[nodiscard]] RevisionFacts revision() const override {
    static constexpr const char *kDescription =
        "Token chunks through bf16 logit GEMMs, one cluster-per-row kernel that computes both "
        "log-sum-exps, the cross-entropy, the JSD and the bf16 gradient row in shared memory, and grad GEMMs "
        "accumulating grad W in fp32, half of it in the bf16 grad W output buffer (rounded in place); never "
        "holds a [T, V] matrix. A single-chunk plan with 8 T <= V takes grad W from one bf16 GEMM scaled by "
        "1/N on the device, then adds the one-hot term to its target rows.";
    static constexpr const char *kAllowed =
        "tau = 1, neither head has a bias and the hidden sizes are multiples of 8";
    static constexpr const char *kOwnGemm =
        "the logit GEMMs are kibench's own sm_90a kernel (TMA, wgmma, 128 x 256 tiles), which also writes "
        "each row's per-tile softmax statistics, and the row kernel combines those instead of a statistics "
        "sweep of its own";
    static constexpr const char *kCublasLogits =
        "the logit GEMMs are cuBLASLt's, and the row kernel computes the row statistics itself";
    static constexpr const char *kFp8Teacher =
        "The teacher logit GEMM runs in FP8 e4m3 on cuBLASLt with outer-vector scales and fp32 "
        "accumulation (not its fast accumulation): when the workload is prepared (untimed; the teacher is "
        "frozen) W_t is copied to e4m3 with one fp32 scale per vocabulary row, s_w[v] = amax(W_t[v, :]) / "
        "448, each W_t[v, k] / s_w[v] rounded to nearest even and saturated at 448; in every timed pass a "
        "kernel quantizes each chunk's x_t rows the same way, s_x[i] = amax(x_t[i, :]) / 448 (scale 1 for "
        "a row of zeros), and the GEMM writes s_x[i] s_w[v] times the e4m3 dot product (plus the teacher "
        "bias) rounded to bf16. Both e4m3 copies are padded with zeros to multiples of 16 along H and V. "
        "The student logit GEMM stays bf16; both logit GEMMs are cuBLASLt's and the row kernel computes "
        "the row statistics itself.";
    std::string logit_gemms;
    switch (fp8_teacher(options_) ? LogitStatistics::off : options_.logit_statistics) {
    case LogitStatistics::off:
      logit_gemms =
          fp8_teacher(options_) ? std::string(kFp8Teacher) : fmt::format("Everywhere {}.", kCublasLogits);
      break;
    case LogitStatistics::on:
      logit_gemms = fmt::format("Where {}, {}.", kAllowed, kOwnGemm);
      break;
    case LogitStatistics::automatic:
      logit_gemms =
          fmt::format("Where {}, the student hidden size is at least {}, chunks hold at least {} "
                      "rows and the statistics' buffers leave the chunk plan's chunk count and grad "
                      "W path as they are, {}; elsewhere {}.",
                      kAllowed, gpu::fused::kStatisticsMinStudentHidden, gpu::fused::kStatisticsMinChunkRows,
                      kOwnGemm, kCublasLogits);
      break;
    }
    // What prepare() does about cuBLASLt's algorithm choice.
    const std::string algorithms =
        options_.plan.gemm_candidates > 1
            ? fmt::format("cuBLASLt algorithms: per GEMM shape the fastest of the heuristic's first {}, "
                          "timed in an untimed pass when the workload is prepared.",
                          options_.plan.gemm_candidates)
            : std::string("cuBLASLt algorithms: the heuristic's first pick.");
    const bool budgeted = options_.workspace_budget != 0;
    RevisionFacts facts = cuda_revision(
        {.name = options_.name,
         .title = budgeted
                      ? fmt::format("kibench fused chunked distillation loss, {} workspace budget (CUDA)",
                                    budget_text(options_.workspace_budget))
                  : fp8_teacher(options_)
                      ? "kibench fused chunked distillation loss, FP8 e4m3 teacher logit GEMM (CUDA)"
                  : options_.logit_statistics == LogitStatistics::on
                      ? "kibench fused chunked distillation loss, own logit GEMMs with row statistics (CUDA)"
                  : options_.logit_statistics == LogitStatistics::off
                      ? "kibench fused chunked distillation loss, cuBLASLt logit GEMMs (CUDA)"
                      : "kibench fused chunked distillation loss (CUDA)",
         .description = fmt::format(
             "{} {} {} {}", kDescription, logit_gemms, algorithms,
             budgeted
                 ? fmt::format("Workspace budget {} ({} bytes): rows per chunk are the most that fit it, "
                               "so a smaller budget runs more, shorter chunks.",
                               budget_text(options_.workspace_budget), options_.workspace_budget)
             : fp8_teacher(options_)
                 ? std::string("Workspace budget: 2 GiB beside the e4m3 copy of W_t and its scales, or "
                               "the fixed part plus 2048-row chunks where that is more.")
                 : std::string("Workspace budget: 2 GiB, or the fixed part plus 2048-row chunks where "
                               "that is more.")),
         .source_path = "kernels/lm_head/fused/fused_implementation.cpp",
         .symbol = "kibench::make_fused"});
    if (budgeted) facts.labels["workspace_budget_bytes"] = std::to_string(options_.workspace_budget);
    if (fp8_teacher(options_))
      facts.labels["teacher_logit_gemm"] =
          std::string(
              "fp8 e4m3 (cuBLASLt, outer-vector scales: per token row computed in the timed pass, per "
              "vocabulary row prepared once") +
          (options_.fp8_fast_accumulation ? "; fast accumulation)" : ")");
    return facts;
  }

  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    if (!gpu::gpu_available()) return fmt::format("no GPU: {}", gpu::gpu_availability().reason);
    if (w.dtype != FloatType::bf16) return fmt::format("{} computes bf16 workloads only", options_.name);
    if (w.scalars.temperature == 0.0 || !(w.scalars.beta >= 0.0 && w.scalars.beta <= 1.0))
      return "temperature must be nonzero and beta in [0, 1]";
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    if (fp8_teacher(options_)) {
      int major = 0, minor = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
      CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
      if (auto why = gpu::fused::fp8_teacher_unsupported(major, minor)) return why;
    }
    if (const std::int64_t max_vocab = gpu::fused::row_loss_max_vocab(device); w.vocab > max_vocab)
      return fmt::format("vocabulary {} exceeds the {} one cluster of the row kernel holds", w.vocab,
                         max_vocab);
    if (w.student_hidden > std::numeric_limits<int>::max() || w.tokens >= std::numeric_limits<int>::max())
      return "student hidden size or token count beyond int32";
    // Inputs may not be on the device yet: count them as still to come.
    const std::uint64_t needed = cpu::planned_input_bytes(w) + output_bytes(w) + kFreeMemoryMargin;
    const std::uint64_t free_bytes = device_free_bytes();
    if (free_bytes <= needed) return "not enough device memory: inputs and outputs alone";
    std::string why;
    if (!planned(w, free_bytes - needed, &why)) {
      // A fixed budget (fused-lean) can refuse a shape that memory would hold.
      const bool budget_bound =
          gpu::fused::plan_chunks(shape_of(w, options_), std::numeric_limits<std::uint64_t>::max(),
                                  free_bytes - needed, options_.plan.chunk_rows)
              .has_value();
      return fmt::format("{}: {}", budget_bound ? "over the workspace budget" : "not enough device memory",
                         why);
    }
    return std::nullopt;
  }

  void poison_outputs() override {
    require_prepared();
    poison(grad_input_, grad_weight_, grad_bias_, loss_);
    host_loss_ = std::numeric_limits<double>::quiet_NaN();
  }

  // Pass::backward runs the full pass: the gradient rows need the forward's
  // row statistics, which are never stored across chunks.
  void run(Pass pass) override {
    require_prepared();
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    const bool grads = pass != Pass::forward;
    if (hooks_.stage_marks != nullptr) hooks_.stage_marks->start(stream());
    // Small kernels that no GEMM reads run on a side stream of the highest
    // priority beside the GEMMs (each is a launch of ~2-10 us at any T):
    // N and the sorted targets, which depend on the targets alone, beside
    // the first chunk's logit GEMMs (the row kernel, N's first reader,
    // waits for them), and grad x's one-hot finish beside grad W's GEMMs
    // (the next chunk's logits, which reuse its fp32 buffer, wait for it).
    const cudaStream_t side = small_kernels_stream();
    gpu::count_valid_tokens(in.target.data(), w.tokens, w.vocab, w.scalars.ignore_index, token_count_.data(),
                            side);
    if (grads)
      gpu::fused::sort_targets(in.target.data(), w.tokens, w.vocab, w.scalars.ignore_index,
                               target_order_.order(), side);
    small_kernels_enqueued();
    stage("token count, target order");
    for (std::int64_t c = 0; c < plan_.chunks; ++c) {
      const Chunk chunk{.begin = c * plan_.rows, .rows = std::min(plan_.rows, w.tokens - c * plan_.rows)};
      if (c > 0) wait_for_small_kernels(); // grad x's fp32 buffer is free again
      enqueue_logits(chunk);
      if (c == 0) wait_for_small_kernels(); // N
      enqueue_row_loss(chunk, grads);
      stage("row kernel");
      if (grads) enqueue_gradients(chunk);
    }
    wait_for_small_kernels(); // the pass ends after the side stream's last kernel
    if (grads && plan_.direct) {
      // grad W left its GEMM divided by N and rounded: the one-hot term goes
      // into its target rows (one_hot.hpp), grad b is still an fp32 sum.
      gpu::fused::add_one_hot_to_scaled_weight(
          target_order_.order(), w.tokens, w.vocab, in.student_input.data(), w.student_hidden,
          static_cast<float>(w.scalars.weight_hard), token_count_.data(), grad_weight_.data(),
          grad_bias_.empty() ? nullptr : grad_bias_.data(), stream());
      stage("grad W one-hot rows");
    } else if (grads) {
      const std::int64_t Hs = w.student_hidden;
      gpu::fused::subtract_one_hot_weight(target_order_.order(), w.tokens, w.vocab, in.student_input.data(),
                                          Hs, static_cast<float>(w.scalars.weight_hard), grad_weight_sum(),
                                          grad_bias_.empty() ? nullptr : grad_bias_.data(), stream());
      // Low rows in place (the student logit buffer as stage 0's temporary),
      // then the high rows behind them: in this order, see the top of the file.
      gpu::fused::scale_to_bf16_in_place(grad_weight_sum().low, split_ * Hs, student_logits_.data(),
                                         static_cast<std::int64_t>(student_logits_.size()),
                                         options_.plan.conversion_first_stage > 0
                                             ? options_.plan.conversion_first_stage
                                             : gpu::fused::kConversionFirstStage,
                                         token_count_.data(), stream());
      gpu::fused::scale_to_bf16(grad_weight_high_.data(), grad_weight_.data() + split_ * Hs,
                                (w.vocab - split_) * Hs, token_count_.data(), stream());
      stage("grad W one-hot, to bf16");
    }
    if (grads && !grad_bias_.empty())
      gpu::fused::scale_in_place(grad_bias_.data(), w.vocab, token_count_.data(), stream());
    gpu::sum_row_losses(row_loss_.data(), w.tokens, token_count_.data(), loss_.data(), stream());
    stage("grad b scale, loss sum");
    has_gradients_ = grads;
  }

  OutputView outputs() override {
    require_prepared();
    stream().synchronize();
    CUDA_CHECK(cudaMemcpy(&host_loss_, loss_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return output_view(host_loss_, has_gradients_, grad_input_, grad_weight_, grad_bias_);
  }

  // The chunk plan and the GEMM algorithms: what the workspace bytes alone
  // do not say about how this run computed its result.
  [[nodiscard]] json::Object run_labels() const override {
    require_prepared();
    json::Object labels = gpu::gemm_tuning_labels(*blas_, gemm_tuning());
    labels.set("chunk_rows", std::to_string(plan_.rows));
    labels.set("chunks", std::to_string(plan_.chunks));
    labels.set("grad_weight_path",
               plan_.direct ? "direct: one bf16 GEMM scaled by 1/N, one-hot term added to its target rows"
                            : "fp32 accumulator over the chunks, rows [0, S) in the output buffer");
    labels.set("row_kernel", hooks_.row_kernel.name);
    static constexpr const char *kFp8Logits = "cuBLASLt: z_s bf16, z_t FP8 e4m3 with outer-vector scales "
                                              "(per token row, per vocabulary row); the row kernel's own row "
                                              "statistics";
    labels.set("logit_gemm", fp8_teacher_   ? kFp8Logits
                             : statistics() ? "kibench abt_gemm (128 x 256 tiles), with row statistics"
                                            : "cuBLASLt");
    return labels;
  }

private:
  void prepare_device(const Workload &w) override {
    const std::uint64_t free_bytes = device_free_bytes();
    const std::uint64_t reserved = output_bytes(w) + kFreeMemoryMargin;
    std::string why;
    const auto planned_shape = planned(w, free_bytes > reserved ? free_bytes - reserved : 0, &why);
    if (!planned_shape) throw std::runtime_error(fmt::format("{}: {}", options_.name, why));
    const gpu::fused::ChunkShape &shape = planned_shape->shape;
    plan_ = planned_shape->plan;

    const std::int64_t T = w.tokens, V = w.vocab, Hs = w.student_hidden, R = plan_.rows;
    blas_ = std::make_unique<gpu::CublasLt>(allocator(), gpu::fused::kCublasWorkspaceBytes);

    grad_input_ = DeviceBuffer<bf16>(allocator(), count(T * Hs), MemoryTag::output);
    grad_weight_ = DeviceBuffer<bf16>(allocator(), count(V * Hs), MemoryTag::output);
    if (w.student_bias) grad_bias_ = DeviceBuffer<float>(allocator(), count(V), MemoryTag::output);
    loss_ = DeviceBuffer<double>(allocator(), 1, MemoryTag::output);

    // Accumulator rows [0, S) in grad_weight_, rows [S, V) here; none in a
    // direct plan.
    split_ = gpu::fused::grad_weight_split(V);
    if (!plan_.direct) grad_weight_high_ = DeviceBuffer<float>(allocator(), count((V - split_) * Hs));
    student_logits_ = DeviceBuffer<bf16>(allocator(), count(R * plan_.ld));
    // Holds z_t, then (as fp32) the chunk's grad x.
    teacher_logits_ = DeviceBuffer<bf16>(allocator(), count(R * std::max(plan_.ld, 2 * Hs)));
    row_loss_ = DeviceBuffer<float>(allocator(), count(T));
    if (shape.logit_statistics) {
      const std::int64_t tiles = gpu::gemm::abt_gemm_column_tiles(V);
      student_stats_ = DeviceBuffer<float2>(allocator(), count(R * tiles));
      teacher_stats_ = DeviceBuffer<float2>(allocator(), count(R * tiles));
      CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device()));
    }
    if (fp8_teacher(options_)) {
      // W_t's e4m3 copy, made here and never again (the teacher is frozen).
      const gpu::DeviceInputs &in = inputs();
      fp8_teacher_ = std::make_unique<gpu::fused::Fp8TeacherLogits>(
          allocator(), V, w.hidden, in.teacher_weight.data(),
          in.has_teacher_bias() ? in.teacher_bias.data() : nullptr, R, stream(),
          options_.fp8_fast_accumulation);
    }
    token_count_ = DeviceBuffer<gpu::TokenCount>(allocator(), 1);
    target_order_ = gpu::fused::TargetOrderBuffers(allocator(), T, shape.sort_temp_bytes);
    side_stream_ = std::make_unique<gpu::Stream>(gpu::Stream::highest_priority());
    side_ready_ = std::make_unique<gpu::Event>(cudaEventDisableTiming);
    side_done_ = std::make_unique<gpu::Event>(cudaEventDisableTiming);
    if (w.student_bias) ones_ = gpu::bf16_ones(allocator(), count(R));
    // The grad W GEMMs' C (both halves) and the high half's A (G' from
    // column S, 2·S bytes in) must be 16-byte aligned for cuBLASLt's
    // vectorized kernels; allocations are 256-byte aligned and S is a
    // multiple of 8, so this only guards the arithmetic.
    if (!aligned_to(grad_weight_.data(), 16) || !aligned_to(grad_weight_high_.data(), 16) ||
        !aligned_to(student_logits_.data() + split_, 16))
      throw std::logic_error(fmt::format("{}: grad W accumulator halves not 16-byte aligned", options_.name));

    // cuBLASLt's algorithms by measurement: one full pass with tuning on
    // times the candidates of every GEMM shape the passes use (the last,
    // shorter chunk has shapes of its own; forward uses a subset) on these
    // inputs and the logits they give. What it leaves in the outputs is
    // never read: the harness poisons them before each run.
    if (options_.plan.gemm_candidates > 1) {
      blas_->tune_during(gemm_tuning(), stream(), [&] { run(Pass::full); });
      has_gradients_ = false;
    }
  }

  void release_device() override {
    for (auto *buffer : {&student_logits_, &teacher_logits_, &ones_, &grad_input_, &grad_weight_})
      buffer->reset();
    for (auto *buffer : {&grad_weight_high_, &row_loss_, &grad_bias_}) buffer->reset();
    student_stats_.reset();
    teacher_stats_.reset();
    fp8_teacher_.reset();
    split_ = 0;
    target_order_ = {};
    loss_.reset();
    token_count_.reset();
    if (side_stream_) side_stream_->synchronize();
    side_done_.reset();
    side_ready_.reset();
    side_stream_.reset();
    plan_ = {};
    blas_.reset();
    has_gradients_ = false;
  }

  // Whether the logit GEMMs are kibench's own, writing row statistics (the
  // plan chose it and prepare() allocated their buffers).
  [[nodiscard]] bool statistics() const { return !student_stats_.empty(); }

  [[nodiscard]] std::uint64_t budget_for(const gpu::fused::ChunkShape &shape) const {
    return options_.workspace_budget != 0 ? options_.workspace_budget
                                          : gpu::fused::default_workspace_budget(shape);
  }

  // The shape to run, with row statistics where the workload allows them
  // and the options ask for them (automatic: where they pay, by the plans
  // with and without them), and its plan within `available` bytes.
  [[nodiscard]] std::optional<PlannedShape> planned(const Workload &w, std::uint64_t available,
                                                    std::string *why) const {
    const auto plan_of = [&](const gpu::fused::ChunkShape &shape) {
      return gpu::fused::plan_chunks(shape, budget_for(shape), available, options_.plan.chunk_rows, why);
    };
    const gpu::fused::ChunkShape shape = shape_of(w, options_);
    const auto plan = plan_of(shape);
    if (shape.logit_statistics && options_.logit_statistics == LogitStatistics::automatic) {
      gpu::fused::ChunkShape without = shape;
      without.logit_statistics = false;
      const auto other = plan_of(without);
      if (other && !(plan && gpu::fused::statistics_pay(shape, *plan, *other)))
        return PlannedShape{without, *other};
    }
    if (!plan) return std::nullopt;
    return PlannedShape{shape, *plan};
  }

  // How prepare() chooses cuBLASLt algorithms (FusedOptions::gemm_candidates).
  [[nodiscard]] gpu::AlgorithmTuning gemm_tuning() const {
    gpu::AlgorithmTuning tuning = gpu::kMeasuredTuning;
    tuning.candidates = options_.plan.gemm_candidates;
    return tuning;
  }

  // The fp32 grad W accumulator: rows [0, S) over the output's bytes.
  gpu::fused::SplitAccumulator grad_weight_sum() {
    return {.low = reinterpret_cast<float *>(grad_weight_.data()),
            .high = grad_weight_high_.data(),
            .split = split_};
  }

  // Token rows [begin, begin + rows) of the pass.
  struct Chunk {
    std::int64_t begin = 0;
    std::int64_t rows = 0;
  };

  // Stage 1: the chunk's logits z_s and z_t, [rows, ld] bf16 (with each
  // row's per-tile statistics where the plan runs kibench's own GEMM).
  void enqueue_logits(const Chunk &chunk) {
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    const std::int64_t V = w.vocab, H = w.hidden, Hs = w.student_hidden, ld = plan_.ld;
    const bf16 *x_s = in.student_input.data() + chunk.begin * Hs;
    const bf16 *x_t = in.teacher_input.data() + chunk.begin * H;
    if (statistics()) {
      // z and its row statistics (of z log2 e, the row kernel's scale at tau = 1).
      gpu::gemm::abt_gemm(gpu::gemm::logit_gemm_with_statistics(
                              chunk.rows, V, Hs, x_s, in.student_weight.data(), student_logits_.data(), ld,
                              student_stats_.data(), gpu::fused::kLog2e),
                          sm_count_, stream().get());
      stage("z_s GEMM");
      gpu::gemm::abt_gemm(gpu::gemm::logit_gemm_with_statistics(
                              chunk.rows, V, H, x_t, in.teacher_weight.data(), teacher_logits_.data(), ld,
                              teacher_stats_.data(), gpu::fused::kLog2e),
                          sm_count_, stream().get());
      stage("z_t GEMM");
      return;
    }
    gpu::RowMajorGemm student =
        gpu::gemm_abt(chunk.rows, V, Hs, x_s, in.student_weight.data(), student_logits_.data());
    student.ldc = ld;
    student.bias = in.has_student_bias() ? in.student_bias.data() : nullptr;
    gpu::matmul_aligned(*blas_, student, stream());
    stage("z_s GEMM");
    if (fp8_teacher_) {
      fp8_teacher_->enqueue(*blas_, x_t, chunk.rows, teacher_logits_.data(), ld, stream());
      stage("z_t GEMM (x_t to e4m3, FP8 GEMM)");
      return;
    }
    gpu::RowMajorGemm teacher =
        gpu::gemm_abt(chunk.rows, V, H, x_t, in.teacher_weight.data(), teacher_logits_.data());
    teacher.ldc = ld;
    teacher.bias = in.has_teacher_bias() ? in.teacher_bias.data() : nullptr;
    gpu::matmul_aligned(*blas_, teacher, stream());
    stage("z_t GEMM");
  }

  // Stage 2: the row kernel, each row's loss term and (for gradients) G'
  // over z_s.
  void enqueue_row_loss(const Chunk &chunk, bool grads) {
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    gpu::fused::RowLossArgs args;
    args.student_logits = student_logits_.data();
    args.teacher_logits = teacher_logits_.data();
    args.rows = chunk.rows;
    args.vocab = w.vocab;
    args.ld = plan_.ld;
    args.target = in.target.data() + chunk.begin;
    args.student_input = in.student_input.data() + chunk.begin * w.student_hidden;
    args.student_weight = in.student_weight.data();
    args.student_bias = in.has_student_bias() ? in.student_bias.data() : nullptr;
    args.student_hidden = w.student_hidden;
    args.row_loss = row_loss_.data() + chunk.begin;
    args.beta = w.scalars.beta;
    args.temperature = w.scalars.temperature;
    args.weight_hard = w.scalars.weight_hard;
    args.weight_soft = w.scalars.weight_soft;
    args.ignore_index = w.scalars.ignore_index;
    args.write_grad = grads;
    if (statistics()) {
      args.student_stats = student_stats_.data();
      args.teacher_stats = teacher_stats_.data();
      args.stats_ld = gpu::gemm::abt_gemm_column_tiles(w.vocab);
    }
    hooks_.row_kernel.launch(args, stream());
  }

  // Stage 3: the chunk's gradients from G': grad x_s rows (fp32 over the
  // z_t buffer, then the one-hot term and / N), grad W (into the split
  // accumulator, or in a direct plan straight to bf16 scaled by 1/N), grad b.
  void enqueue_gradients(const Chunk &chunk) {
    const Workload &w = workload();
    const gpu::DeviceInputs &in = inputs();
    const std::int64_t V = w.vocab, Hs = w.student_hidden, ld = plan_.ld;
    const bf16 *logits = student_logits_.data(); // G'
    const bool first = chunk.begin == 0;

    auto *grad_input_sum = reinterpret_cast<float *>(teacher_logits_.data());
    gpu::RowMajorGemm dx = gpu::gemm_ab(chunk.rows, Hs, V, logits, in.student_weight.data(), grad_input_sum);
    dx.lda = ld;
    dx.output_type = ElementType::fp32;
    gpu::matmul_aligned(*blas_, dx, stream());
    stage("grad x GEMM");
    gpu::fused::finish_grad_input(grad_input_sum, in.target.data() + chunk.begin, chunk.rows, V,
                                  w.scalars.ignore_index, in.student_weight.data(), Hs,
                                  static_cast<float>(w.scalars.weight_hard), token_count_.data(),
                                  grad_input_.data() + chunk.begin * Hs, small_kernels_stream());
    small_kernels_enqueued();
    stage("grad x one-hot, to bf16");

    const bf16 *x_s = in.student_input.data() + chunk.begin * Hs;
    if (plan_.direct) {
      // The one chunk's grad W = G'ᵀ x_s / N, rounded by the GEMM (the
      // one-hot term follows in run()).
      gpu::RowMajorGemm dw = gpu::gemm_atb(V, Hs, chunk.rows, logits, x_s, grad_weight_.data());
      dw.lda = ld;
      dw.device_alpha = &token_count_.data()->inverse_float;
      dw.device_beta = &token_count_.data()->zero;
      gpu::matmul_aligned(*blas_, dw, stream());
    } else {
      // grad W rows [0, S) and [S, V): G'ᵀ's rows are G''s columns, so the
      // high half reads G' from column S (lda = ld either way).
      const gpu::fused::SplitAccumulator sum = grad_weight_sum();
      for (const auto &[row_begin, row_end, out] :
           {std::tuple{std::int64_t{0}, split_, sum.low}, std::tuple{split_, V, sum.high}}) {
        if (row_end == row_begin) continue; // V < 16: no low half
        gpu::RowMajorGemm dw =
            gpu::gemm_atb(row_end - row_begin, Hs, chunk.rows, logits + row_begin, x_s, out);
        dw.lda = ld;
        dw.output_type = ElementType::fp32;
        dw.beta = first ? 0.0 : 1.0;
        gpu::matmul_aligned(*blas_, dw, stream());
      }
    }
    stage(plan_.direct ? "grad W GEMM (bf16, / N)" : "grad W GEMMs (fp32, beta 1 after the first chunk)");

    if (!grad_bias_.empty()) {
      gpu::RowMajorGemm db = gpu::gemm_ab(1, V, chunk.rows, ones_.data(), logits, grad_bias_.data());
      db.ldb = ld;
      db.output_type = ElementType::fp32;
      db.beta = first ? 0.0 : 1.0;
      gpu::matmul_aligned(*blas_, db, stream());
      stage("grad b GEMM");
    }
  }

  // Where the next small kernels run (run() says why): the side stream,
  // after everything enqueued on the pass's stream so far, or the pass's
  // own stream (FusedStudyHooks::small_kernels_in_line).
  cudaStream_t small_kernels_stream() {
    if (hooks_.small_kernels_in_line) return stream();
    side_ready_->record(stream());
    side_stream_->wait(*side_ready_);
    return *side_stream_;
  }
  // Marks the side stream's work so far, for wait_for_small_kernels.
  void small_kernels_enqueued() {
    if (!hooks_.small_kernels_in_line) side_done_->record(*side_stream_);
  }
  // The pass's stream waits for the small kernels marked last.
  void wait_for_small_kernels() {
    if (!hooks_.small_kernels_in_line) stream().wait(*side_done_);
  }

  // Closes the stage since the previous mark on the study's clock, if any.
  void stage(const char *name) {
    if (hooks_.stage_marks != nullptr) hooks_.stage_marks->mark(name, stream());
  }

  FusedOptions options_;
  FusedStudyHooks hooks_;
  gpu::fused::ChunkPlan plan_;
  std::int64_t split_ = 0; // S: accumulator rows [0, S) live in grad_weight_
  bool has_gradients_ = false;
  double host_loss_ = std::numeric_limits<double>::quiet_NaN();

  std::unique_ptr<gpu::CublasLt> blas_;

  DeviceBuffer<bf16> grad_input_;        // output [T, Hs]
  DeviceBuffer<bf16> grad_weight_;       // output [V, Hs]; fp32 accumulator rows [0, S) until the end
  DeviceBuffer<float> grad_bias_;        // output [V], fp32: a [V] vector rounds nowhere
  DeviceBuffer<double> loss_;            // output
  DeviceBuffer<float> grad_weight_high_; // accumulator rows [S, V): sum over chunks of G'ᵀ x_s
  DeviceBuffer<bf16> student_logits_;    // [R, ld]: z_s, then G'
  DeviceBuffer<bf16> teacher_logits_;    // [R, ld]: z_t, then fp32 grad x [R, Hs]
  DeviceBuffer<bf16> ones_;              // [R] for grad b as a GEMM
  DeviceBuffer<float> row_loss_;         // [T]
  DeviceBuffer<gpu::TokenCount> token_count_;
  gpu::fused::TargetOrderBuffers target_order_; // the targets in sorted order, for grad W's one-hot term
  // Where the small kernels run beside the GEMMs (run), and the events
  // that fork it from the pass's stream and mark its latest work.
  std::unique_ptr<gpu::Stream> side_stream_;
  std::unique_ptr<gpu::Event> side_ready_, side_done_;
  // The logit GEMMs' row statistics (FusedOptions::logit_statistics):
  // [R, abt_gemm_column_tiles(V)] each, on sm_count_ SMs.
  int sm_count_ = 0;
  DeviceBuffer<float2> student_stats_, teacher_stats_;
  // FusedOptions::teacher_precision fp8_e4m3: the e4m3 teacher GEMM's
  // operands and scales (null for a bf16 teacher).
  std::unique_ptr<gpu::fused::Fp8TeacherLogits> fp8_teacher_;
};

} // namespace

std::unique_ptr<Implementation> make_fused(FusedOptions options) {
  return std::make_unique<FusedImplementation>(std::move(options), FusedStudyHooks{});
}

std::unique_ptr<Implementation> make_fused_for_study(FusedOptions options, FusedStudyHooks hooks) {
  return std::make_unique<FusedImplementation>(std::move(options), hooks);
}

} // namespace kibench
