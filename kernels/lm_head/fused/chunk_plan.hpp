// How many token rows the fused implementation processes at a time, and
// the device memory that takes. Host-only arithmetic, so it is tested
// without a GPU.
//
// Per chunk of R rows the implementation holds, beyond inputs and outputs:
//   student logits / G'  R x ld bf16       (ld = V rounded up to 64)
//   teacher logits       R x ld bf16       (afterwards the chunk's fp32 grad x)
//   ones                 R bf16            (grad b as a GEMM; bias only)
//   row statistics       2 x R x ceil(V/256) x 8 B (the logit GEMMs' per-
//                                           tile (max, sum) of z_s and z_t;
//                                           only with logit_statistics:
//                                           8 KB a row at V = 128256)
//   x_t in e4m3          R x H16 B + R fp32 scales (only with an FP8
//                                           teacher, fp8_teacher.hpp; H16 =
//                                           H rounded up to 16)
// and, whatever R:
//   grad W accumulator   (V - S) x Hs fp32 (rows [S, V); rows [0, S) live in
//                                           the bf16 output buffer, read as
//                                           fp32: grad_weight_split.hpp,
//                                           S = floor(V/16)·8 ~ V/2), but
//                                           not for a direct plan (below)
//   per-row loss terms   T fp32,  N
//   the targets sorted   4 x T int32 and the sort's scratch (one_hot.hpp)
//   the cuBLASLt workspace
//   W_t in e4m3          V16 x H16 B, V16 fp32 scales and, with a teacher
//                                           bias, V16 bf16 (only with an FP8
//                                           teacher; 0.53 GB at the seed).
// R is the largest that keeps all of this within the budget and the free
// memory, then evened out over ceil(T / R) chunks and rounded up to 128
// rows (GEMM tiles), never past that largest R.
//
// At the seed (T = 8192, V = 128256, Hs = 2048, no bias; S = V/2 = 64128):
//   fixed    32 MiB cuBLASLt + 4·64128·2048 = 525,336,576 B of accumulator
//            + 0.16 MB (loss terms, N, sorted targets, 512 B of sort
//            scratch as the host tests assume) = 559,055,872 B
//   per row  2·128256 (z_s) + 2·128256 (z_t; wider than the 8 KiB fp32
//            grad x row) = 513,024 B
//   2 GiB    largest R = floor((2^31 − fixed − 3·512) / 513,024) = 3096:
//            3 chunks, evened to 2731, rounded up to 128: R = 2816 (chunks
//            of 2816, 2816, 2560), 2,003,731,456 B = 1.87 GiB.
//            With the whole accumulator as workspace (v2) it was R = 2048,
//            4 chunks, 2,135,065,600 B = 1.99 GiB.
//   1 GiB    (fused-lean) largest R = floor((2^30 − fixed − 3·512) / 513,024)
//            = 1003: 9 chunks, evened to 911, which rounded up to 1024 would
//            not fit, so R = 1003 (8 × 1003 + 168), 1,073,618,944 B. The
//            122,880 B to spare keep R = 1003 for sort scratch up to
//            119 KiB (CUB's for 8192 pairs is below that).
// A direct plan is one chunk of all T rows where 8 T <= V: grad W leaves
// one bf16 GEMM scaled by 1/N (fused_implementation.hpp), so the accumulator
// is not allocated. Where the shape allows it (ChunkShape::direct_grad_weight
// and 8 T <= V) it is chosen whenever it fits, before any chunked plan: at
// T = 1024, V = 128256, Hs = 2048 it needs 560 MB instead of 1.09 GB, so
// fused-lean runs it in one chunk instead of two.
// Expected effect of 3 chunks instead of 4 at 2 GiB: the grad W GEMMs run
// beta = 1 (read-modify-write of the 1.05 GB fp32 accumulator) twice
// instead of three times: 2.1 GB less traffic, at most 0.5 ms at the 4.27
// TB/s copy bandwidth and partly hidden under the GEMMs' arithmetic; to be
// measured (docs/perf.md, v3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kibench::gpu::fused {

struct ChunkShape {
  std::int64_t tokens = 0;         // T
  std::int64_t vocab = 0;          // V
  std::int64_t student_hidden = 0; // Hs
  bool student_bias = false;
  std::uint64_t sort_temp_bytes = 0; // target_sort_temp_bytes(T, V), asked of the GPU
  bool direct_grad_weight = false;   // FusedOptions::direct_single_chunk: direct plans allowed
  bool logit_statistics = false;     // the logit GEMMs write row statistics (FusedOptions)
  // The teacher logit GEMM in FP8 e4m3 (FusedOptions::teacher_precision,
  // fp8_teacher.hpp): the teacher's hidden size H, 0 for a bf16 teacher,
  // and whether the teacher has a bias.
  std::int64_t fp8_teacher_hidden = 0;
  bool fp8_teacher_bias = false;
};

struct ChunkPlan {
  std::int64_t rows = 0;             // R: rows per chunk (the last may be shorter)
  std::int64_t chunks = 0;           // ceil(T / R)
  std::int64_t ld = 0;               // row stride of the logit buffers, in elements
  std::uint64_t workspace_bytes = 0; // everything above, as allocated
  bool direct = false;               // one chunk, grad W without the fp32 accumulator
};

inline constexpr std::uint64_t kDefaultWorkspaceBudget = std::uint64_t{2} << 30;
// The `fused-lean` registry entry's budget: more, shorter chunks for half
// the workspace (at the seed: R = 1003, 9 chunks, within 2^30 bytes).
inline constexpr std::uint64_t kLeanWorkspaceBudget = std::uint64_t{1} << 30;
// cuBLASLt's recommended workspace on Hopper.
inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
// The row kernel's grid is (8, R): R must fit gridDim.y.
inline constexpr std::int64_t kMaxChunkRows = 65535;

[[nodiscard]] std::int64_t logits_stride(std::int64_t vocab);

// An FP8 teacher's fixed buffers, as allocated: the e4m3 copy of W_t and
// its scales (and the padded bias); 0 for a bf16 teacher. The default
// budget holds them beside its 2 GiB (default_workspace_budget), so the
// chunks are those of the bf16 teacher wherever the e4m3 copies of x_t
// leave room (at the seed, 2816 rows either way).
[[nodiscard]] std::uint64_t fp8_teacher_weight_bytes(const ChunkShape &shape);

// Whether chunks of `rows` rows make a direct plan of this shape: one
// chunk (rows >= T), 8 T <= V, and the shape allows it.
[[nodiscard]] bool direct_plan(const ChunkShape &shape, std::int64_t rows);

// Bytes of workspace for chunks of `rows` rows, as the allocator rounds them
// (without the accumulator where direct_plan(shape, rows)).
[[nodiscard]] std::uint64_t workspace_bytes(const ChunkShape &shape, std::int64_t rows);

// `forced_rows` > 0 fixes R (clamped to T), e.g. to run several chunks on a
// small case. `available_bytes` is the device memory free for the workspace.
// nullopt, with `why` set, when not even one row fits.
// Rows per chunk below which the logit GEMMs run short of the floor's rate
// and the fp32 grad W accumulator is re-read too often (measured: 1024-row
// chunks cost the seed 3.4 ms more than 2048-row ones).
inline constexpr std::int64_t kEfficientChunkRows = 2048;

// The budget used when none is given: kDefaultWorkspaceBudget (plus an FP8
// teacher's fixed buffers), raised to the fixed part plus
// kEfficientChunkRows rows where the two do not fit in it.
// The fixed part is mostly the accumulator's workspace half,
// 4·(V − S)·Hs ≈ 2·V·Hs bytes, and a row costs ~4·V bytes, so the raise
// applies where 2·V·Hs + 2048·4·V > 2 GiB, e.g. V = 256000 at Hs = 2048
// (1.05 GB + 2.10 GB: 2.96 GiB). Hs = 4096 at V = 128256 now fits (1.05 GB
// + 1.05 GB + 32 MiB = 1.99 GiB); with the whole accumulator as workspace
// it needed 2.97 GiB. Without the raise such shapes ran in chunks of a few
// dozen rows, 16–25× slower than the GEMM floor.
[[nodiscard]] std::uint64_t default_workspace_budget(const ChunkShape &shape);

[[nodiscard]] std::optional<ChunkPlan> plan_chunks(const ChunkShape &shape, std::uint64_t budget_bytes,
                                                   std::uint64_t available_bytes, std::int64_t forced_rows,
                                                   std::string *why = nullptr);

// The student hidden size (the student logit GEMM's K) from which the
// logit GEMMs' row statistics pay: the statistics cost the GEMM a fixed
// time a tile, +1.8 % at K = 2048 and +0.8 % at K = 4096, while what the
// row kernel saves does not depend on K.
inline constexpr std::int64_t kStatisticsMinStudentHidden = 2048;

// The chunk rows from which they pay. kibench's GEMM computes whole
// 256-row cluster tiles (two CTAs on adjacent 128-row tiles sharing each
// W tile), so below a few hundred rows it multiplies mostly padding while
// cuBLASLt picks small-M tiles that read W at HBM speed; the row kernel's
// saving shrinks with the rows. Measured on the H200 (docs/perf.md,
// 2026-12-05, one direct chunk each): at T = 1, 7, 64 and 128 cuBLASLt's
// logit GEMMs made the pass 1.05-1.17x the floor, kibench's 1.37-1.51x; at
// 256 and 512 the statistics cost 2.6 and 2.1 %, at 1024 0.3 % (equal
// within the noise), at 2048 they gained 1.6 %.
inline constexpr std::int64_t kStatisticsMinChunkRows = 1024;

// Whether a shape whose logit GEMMs can write row statistics should, given
// its plans with (`with`) and without them: where Hs >= 2048, chunks hold
// at least 1024 rows and the statistics' buffers (8 KB a row at V = 128256)
// leave the chunk count and the direct grad W path as they are. Measured
// on the H200 (docs/perf.md, 2026-12-04, same-run A/B in rotated order):
// full passes within the noise of a cold run (-1.8 to +0.1 %), 0.7-1.5 %
// faster and 0.8-1.4 % fewer joules sustained at the seed, H = 8192,
// V = 256000 and T = 16384, the seed's forward pass 2.9 % faster; at
// Hs = 1024 and where they split T = 4096's one direct chunk in two,
// 2.7-2.8 % slower.
[[nodiscard]] bool statistics_pay(const ChunkShape &shape, const ChunkPlan &with, const ChunkPlan &without);

} // namespace kibench::gpu::fused
