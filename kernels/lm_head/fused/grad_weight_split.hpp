// Where the fused implementation's fp32 grad W accumulator lives, and the
// order in which its low half is rounded to bf16 in place. Host-only
// arithmetic, so it is tested without a GPU.
//
// The bf16 output grad W [V, Hs] has 2·V·Hs bytes: exactly the bytes of V/2
// fp32 rows. So accumulator rows [0, S) live in the output buffer itself
// (read as float) and only rows [S, V) in a workspace buffer:
//   S = floor(V / 16) · 8    (= floor(V / 2) whenever V is a multiple of 16,
//                             the seed's 128256 = 16 · 8016 included)
//   low   4·S·Hs bytes ≤ 2·V·Hs bytes of the output   (2·S ≤ V)
//   high  4·(V − S)·Hs bytes of workspace,  V − S ≤ ceil(V/2) + 7 rows.
// S is a multiple of 8 rather than exactly floor(V/2) because the high half's
// grad W GEMM reads G' from column S of the logit buffer: a bf16 pointer
// 2·S bytes in, which is 16-byte aligned (what cuBLASLt's vectorized
// kernels need) only when S is a multiple of 8. Both fp32 halves start at
// an allocation (256-byte aligned).
#pragma once

#include <cstdint>
#include <vector>

namespace kibench::gpu::fused {

// S: the first accumulator row kept in the workspace rather than the output.
[[nodiscard]] constexpr std::int64_t grad_weight_split(std::int64_t vocab) {
  return vocab / 16 * 8;
}

// One stream-ordered step of the in-place fp32 -> bf16 conversion of
// `count` elements: converts elements [begin, end). `through_temp`: the
// results go to a temporary first and are copied into place afterwards.
struct ConversionStage {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool through_temp = false;
  friend bool operator==(const ConversionStage &, const ConversionStage &) = default;
};

// Elements of the first stage when nothing smaller is asked for: 4 MiB of
// fp32, small next to the chunk buffers it borrows as the temporary.
inline constexpr std::int64_t kConversionFirstStage = std::int64_t{1} << 20;

// The stages that convert fp32 element i, at float index i of a buffer, into
// bf16 element i of the same buffer (bf16 index i), for i < count, never
// reading a byte that an earlier stage, or the same one, has overwritten.
// In bf16 indices, fp32 element i occupies [2i, 2i + 2).
//   stage 0  [0, n0), n0 = min(count, first): reads bf16 [0, 2·n0), overlapping
//            its own writes [0, n0), so it converts into a temporary, which
//            is then copied to bf16 [0, n0).
//   stage k  [a, 2a) clipped to count, a = n0·2^(k−1): reads fp32 [a, 2a) =
//            bf16 [2a, 4a), beyond every write so far (bf16 [0, a)) and its
//            own (bf16 [a, 2a)); it writes bf16 [a, 2a), the bytes of fp32
//            elements [a/2, a), which earlier stages have converted.
// About log2(count / n0) + 1 stages, each a kernel over disjoint bytes.
// `first` must be positive; empty for count ≤ 0.
[[nodiscard]] std::vector<ConversionStage> in_place_conversion_stages(std::int64_t count, std::int64_t first);

} // namespace kibench::gpu::fused
