#include "kernels/lm_head/fused/chunk_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/cuda/device_allocator.hpp"
#include "kernels/lm_head/fused/abt_gemm.hpp"
#include "kernels/lm_head/fused/fp8_teacher.hpp"
#include "kernels/lm_head/fused/grad_weight_split.hpp"

namespace kibench::gpu::fused {

namespace {

std::uint64_t allocated(std::uint64_t bytes) {
  return DeviceAllocator::rounded(bytes);
}

std::uint64_t u64(std::int64_t n) {
  return static_cast<std::uint64_t>(n);
}

// The teacher buffer later holds the chunk's fp32 grad x [R, Hs].
std::uint64_t teacher_row_bytes(const ChunkShape &s) {
  return std::max(2 * u64(logits_stride(s.vocab)), 4 * u64(s.student_hidden));
}

// Rows [0, S) of the fp32 grad W accumulator live in the bf16 output
// (counted as output); only rows [S, V) are workspace, and none in a direct
// plan.
std::uint64_t fixed_bytes(const ChunkShape &s, bool direct) {
  const std::int64_t high_rows = s.vocab - grad_weight_split(s.vocab);
  const std::uint64_t accumulator = direct ? 0 : allocated(4 * u64(high_rows) * u64(s.student_hidden));
  return allocated(kCublasWorkspaceBytes) + accumulator + allocated(4 * u64(s.tokens)) +
         allocated(64) /* N */ + 4 * allocated(4 * u64(s.tokens)) +
         allocated(std::max<std::uint64_t>(s.sort_temp_bytes, 1)) + fp8_teacher_weight_bytes(s);
}

// An FP8 teacher's e4m3 row of x_t and its fp32 scale.
std::uint64_t fp8_teacher_row_bytes(const ChunkShape &s) {
  return s.fp8_teacher_hidden > 0 ? u64(fp8_padded(s.fp8_teacher_hidden)) + 4 : 0;
}

// One logit GEMM's row statistics a token row: a float2 per column tile.
std::uint64_t statistics_row_bytes(const ChunkShape &s) {
  return s.logit_statistics ? 8 * u64(gemm::abt_gemm_column_tiles(s.vocab)) : 0;
}

// What the allocator's rounding may add to the per-row buffers beyond
// rows · per-row bytes: 512 a buffer (z_s, z_t, ones; both statistics; an
// FP8 teacher's x_t codes and scales).
std::uint64_t rounding_slack(const ChunkShape &s) {
  return (3 + (s.logit_statistics ? 2 : 0) + (s.fp8_teacher_hidden > 0 ? 2 : 0)) * 512;
}

} // namespace

std::int64_t logits_stride(std::int64_t vocab) {
  return (vocab + 63) / 64 * 64;
}

std::uint64_t fp8_teacher_weight_bytes(const ChunkShape &s) {
  if (s.fp8_teacher_hidden <= 0) return 0;
  const std::uint64_t vocab = u64(fp8_padded(s.vocab)), hidden = u64(fp8_padded(s.fp8_teacher_hidden));
  return allocated(vocab * hidden) + allocated(4 * vocab) + (s.fp8_teacher_bias ? allocated(2 * vocab) : 0);
}

bool direct_plan(const ChunkShape &s, std::int64_t rows) {
  return s.direct_grad_weight && rows >= s.tokens && 8 * s.tokens <= s.vocab;
}

std::uint64_t workspace_bytes(const ChunkShape &s, std::int64_t rows) {
  const std::uint64_t r = u64(rows);
  const std::uint64_t fp8_input =
      s.fp8_teacher_hidden > 0 ? allocated(r * u64(fp8_padded(s.fp8_teacher_hidden))) + allocated(4 * r) : 0;
  return fixed_bytes(s, direct_plan(s, rows)) + allocated(r * 2 * u64(logits_stride(s.vocab))) +
         allocated(r * teacher_row_bytes(s)) + (s.student_bias ? allocated(2 * r) : 0) +
         (s.logit_statistics ? 2 * allocated(r * statistics_row_bytes(s)) : 0) + fp8_input;
}

std::uint64_t default_workspace_budget(const ChunkShape &s) {
  const std::int64_t rows = std::min({s.tokens, kMaxChunkRows, kEfficientChunkRows});
  return std::max<std::uint64_t>(kDefaultWorkspaceBudget + fp8_teacher_weight_bytes(s),
                                 workspace_bytes(s, rows) + rounding_slack(s));
}

std::optional<ChunkPlan> plan_chunks(const ChunkShape &s, std::uint64_t budget_bytes,
                                     std::uint64_t available_bytes, std::int64_t forced_rows,
                                     std::string *why) {
  const auto fail = [&](std::string reason) -> std::optional<ChunkPlan> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (s.tokens <= 0 || s.vocab <= 0 || s.student_hidden <= 0) return fail("empty shape");
  const std::int64_t cap = std::min(s.tokens, kMaxChunkRows);

  const std::uint64_t limit = std::min(budget_bytes, available_bytes);
  const auto plan_of = [&](std::int64_t rows) {
    return ChunkPlan{.rows = rows,
                     .chunks = (s.tokens + rows - 1) / rows,
                     .ld = logits_stride(s.vocab),
                     .workspace_bytes = workspace_bytes(s, rows),
                     .direct = direct_plan(s, rows)};
  };
  // One direct chunk wherever it fits (and forced rows do not split T).
  if (s.tokens <= cap && (forced_rows <= 0 || forced_rows >= s.tokens) && direct_plan(s, s.tokens) &&
      workspace_bytes(s, s.tokens) <= limit)
    return plan_of(s.tokens);

  std::int64_t rows = 0;
  if (forced_rows > 0) {
    rows = std::min(forced_rows, cap);
  } else {
    // Per-row bytes, with the allocator's rounding as slack.
    const std::uint64_t per_row = 2 * u64(logits_stride(s.vocab)) + teacher_row_bytes(s) +
                                  (s.student_bias ? 2 : 0) + 2 * statistics_row_bytes(s) +
                                  fp8_teacher_row_bytes(s);
    const std::uint64_t fixed = fixed_bytes(s, false) + rounding_slack(s);
    if (limit <= fixed + per_row)
      return fail(fmt::format("the fused workspace needs {:.2f} GiB for one token row; {:.2f} GiB allowed",
                              static_cast<double>(fixed + per_row) / (1u << 30),
                              static_cast<double>(limit) / (1u << 30)));
    const auto largest =
        static_cast<std::int64_t>(std::min<std::uint64_t>((limit - fixed) / per_row, u64(cap)));
    const std::int64_t chunks = (s.tokens + largest - 1) / largest;
    const std::int64_t even = (s.tokens + chunks - 1) / chunks;
    rows = std::min({(even + 127) / 128 * 128, largest, cap});
  }
  return plan_of(rows);
}

bool statistics_pay(const ChunkShape &s, const ChunkPlan &with, const ChunkPlan &without) {
  return s.student_hidden >= kStatisticsMinStudentHidden && with.rows >= kStatisticsMinChunkRows &&
         with.chunks == without.chunks && with.direct == without.direct;
}

} // namespace kibench::gpu::fused
