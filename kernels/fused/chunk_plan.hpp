// How many token rows the fused implementation processes at a time, and
// the device memory that takes. Host-only arithmetic, so it is tested
// without a GPU.
//
// Per chunk of R rows the implementation holds, beyond inputs and outputs:
//   student logits / G'  R x ld bf16       (ld = V rounded up to 64)
//   teacher logits       R x ld bf16       (afterwards the chunk's fp32 grad x)
//   ones                 R bf16            (grad b as a GEMM; bias only)
// and, whatever R:
//   grad W accumulator   V x Hs fp32       (rounded to bf16 once, at the end)
//   per-row loss terms   T fp32,  N
//   the targets sorted   4 x T int32 and the sort's scratch (one_hot.hpp)
//   the cuBLASLt workspace.
// R is the largest that keeps all of this within the budget and the free
// memory, then evened out over ceil(T / R) chunks and rounded up to 128
// rows (GEMM tiles), never past that largest R.
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
};

struct ChunkPlan {
  std::int64_t rows = 0;             // R: rows per chunk (the last may be shorter)
  std::int64_t chunks = 0;           // ceil(T / R)
  std::int64_t ld = 0;               // row stride of the logit buffers, in elements
  std::uint64_t workspace_bytes = 0; // everything above, as allocated
};

inline constexpr std::uint64_t kDefaultWorkspaceBudget = std::uint64_t{2} << 30;
// cuBLASLt's recommended workspace on Hopper.
inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
// The row kernel's grid is (8, R): R must fit gridDim.y.
inline constexpr std::int64_t kMaxChunkRows = 65535;

[[nodiscard]] std::int64_t logits_stride(std::int64_t vocab);

// Bytes of workspace for chunks of `rows` rows, as the allocator rounds them.
[[nodiscard]] std::uint64_t workspace_bytes(const ChunkShape &shape, std::int64_t rows);

// `forced_rows` > 0 fixes R (clamped to T), e.g. to run several chunks on a
// small case. `available_bytes` is the device memory free for the workspace.
// nullopt, with `why` set, when not even one row fits.
// Rows per chunk below which the logit GEMMs run short of the floor's rate
// and the fp32 grad W accumulator is re-read too often (measured: 1024-row
// chunks cost the seed 3.4 ms more than 2048-row ones).
inline constexpr std::int64_t kEfficientChunkRows = 2048;

// The budget used when none is given: kDefaultWorkspaceBudget, raised to the
// fixed part plus kEfficientChunkRows rows where the fixed part (the fp32
// grad W accumulator: 4·V·Hs bytes) nearly fills it by itself (V = 256000,
// or Hs = 4096). Without the raise such shapes ran in chunks of a few dozen
// rows, 16–25× slower than the GEMM floor.
[[nodiscard]] std::uint64_t default_workspace_budget(const ChunkShape &shape);

[[nodiscard]] std::optional<ChunkPlan> plan_chunks(const ChunkShape &shape, std::uint64_t budget_bytes,
                                                   std::uint64_t available_bytes, std::int64_t forced_rows,
                                                   std::string *why = nullptr);

} // namespace kibench::gpu::fused
