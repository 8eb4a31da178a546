// `fused`: the distillation loss and its student gradients without ever
// holding a [T, V] matrix. Token chunks of R rows run through
//   z_s = x_s W_sᵀ (+ b_s), z_t = x_t W_tᵀ (+ b_t)   cuBLASLt, bf16 [R, V], or
//                                                     abt_gemm with row
//                                                     statistics (below)
//   the row kernel (row_loss.hpp)                    per-row loss terms; G' over z_s
//   grad x_s[chunk] = (G' W_s - w_h W_s[y]) / N       fp32 GEMM, then one rounding
//   grad W_s += G'ᵀ x_s[chunk]                        fp32 accumulator (beta = 1),
//                                                     as two GEMMs: rows [0, S)
//                                                     and rows [S, V)
//   grad b_s += column sums of G'                     a ones-vector GEMM (bias only)
// where G' = N G without its one-hot term, which one_hot.hpp adds in fp32;
// after the last chunk grad W_s and grad b_s get that term, grad W_s / N is
// rounded once, and the loss is one fixed-order fp64 sum. The logit rows
// are padded to a multiple of 8 columns, and every cuBLASLt GEMM whose
// vocabulary extent is not one is cut at its last multiple of 8
// (kernels/cuda/aligned_gemm.hpp): any V runs at the aligned rate.
//
// The fp32 grad W accumulator's rows [0, S), S = floor(V/16)·8 ~ V/2, live
// in the bf16 grad W output buffer itself (4·S·Hs ≤ 2·V·Hs bytes), only rows
// [S, V) in workspace (grad_weight_split.hpp); the low rows are rounded to
// bf16 in place, in stages, before the high rows are written behind them.
// That halves the accumulator's workspace: chunk_plan.hpp says how R is
// chosen (2816 rows, 1.87 GiB of workspace at the seed size by default;
// 1003 rows within 1 GiB for `fused-lean`).
//
// `fused-fp8-teacher` (TeacherPrecision::fp8_e4m3) is this with z_t from an
// FP8 e4m3 GEMM with per-token and per-vocabulary-row scales
// (fp8_teacher.hpp): the e4m3 copy of W_t is made in prepare(), x_t's
// chunks are quantized inside the timed pass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/row_loss.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench {

enum class LogitStatistics {
  off,       // cuBLASLt's logit GEMMs; the row kernel computes the statistics
  on,        // kibench's logit GEMM with row statistics wherever the workload allows it
  automatic, // that, where gpu::fused::statistics_pay says it pays
};

// The operands of the teacher logit GEMM z_t = x_t W_tᵀ.
enum class TeacherPrecision {
  bf16,     // as the workload stores them, as for z_s
  fp8_e4m3, // e4m3 copies with one fp32 scale per row of x_t and of W_t (fp8_teacher.hpp)
};

// What tests and studies may force that the plan would otherwise choose:
// small cases then take the paths only big ones take by themselves.
struct FusedPlanOverrides {
  // Rows per chunk; 0 picks them from the shape and free memory. Tests force
  // small chunks so that several run on a small case.
  std::int64_t chunk_rows = 0;
  // Elements of the first stage of grad W's in-place conversion (through
  // the temporary); 0: gpu::fused::kConversionFirstStage. Tests make it
  // small so that many stages run on a small case.
  std::int64_t conversion_first_stage = 0;
  // cuBLASLt algorithms timed per GEMM shape in prepare() (gpu::CublasLt's
  // AlgorithmTuning); 1 takes the heuristic's first pick untimed (faster
  // tests, and the same GEMMs run after run).
  int gemm_candidates = gpu::kMeasuredTuning.candidates;
  // Single-chunk plans with 8 T <= V: grad W leaves one bf16 GEMM scaled
  // by 1/N on the device, and the one-hot term is added to its target rows
  // (one_hot.hpp), with no fp32 accumulator pass and conversion (~0.6 ms
  // at T = 1024, V = 128256) and no accumulator in the workspace (0.53 GB
  // less there; chunk_plan.hpp). false: the accumulator path of
  // multi-chunk plans, so tests check both on one shape.
  bool direct_single_chunk = true;
};

struct FusedOptions {
  // The variant's registry name: Implementation::name(), and "kibench-" +
  // name in the revision (e.g. "fused-lean" with a 1 GiB budget).
  std::string name = "fused";
  // Device memory the implementation may hold beyond inputs and outputs;
  // 0: gpu::fused::default_workspace_budget of the shape.
  std::uint64_t workspace_budget = 0;
  // Logit GEMMs that write row statistics: where tau = 1, neither head has
  // a bias, and both hidden sizes are multiples of 8 (whole 16-byte TMA
  // rows of x and W; an odd V runs as V rounded up to 8 columns, the rows
  // of W past V read as zeros), z_s and z_t can come from kibench's own GEMM
  // (kernels/lm_head/fused/abt_gemm.hpp), which also writes each row's
  // per-256-column (max, Σ exp); the row kernel combines those instead of a
  // statistics sweep and cluster reduction of its own, and takes the KL
  // terms in its load sweep. The row kernel gains and the GEMMs lose a
  // little, so whether the pass gains depends on the shape
  // (gpu::fused::statistics_pay; the figures are in docs/perf-log.md,
  // "Row statistics where they pay").
  LogitStatistics logit_statistics = LogitStatistics::automatic;
  FusedPlanOverrides plan = {};
  // fp8_e4m3: the teacher logit GEMM in FP8 on cuBLASLt; the logit GEMMs
  // are then never kibench's own (whatever logit_statistics says), so the
  // row kernel computes the row statistics, and the default workspace
  // budget holds the e4m3 copy of W_t beside its 2 GiB (chunk_plan.hpp).
  TeacherPrecision teacher_precision = TeacherPrecision::bf16;
  // With an fp8_e4m3 teacher: cuBLASLt's fast accumulation for the teacher
  // GEMM (gpu::Fp8Scales::fast_accumulation), the whole k = H sum kept in
  // the tensor cores' accumulator instead of promoted to fp32 at intervals.
  // Its error is of order 2^-14 sqrt(H / 32) of a logit's scale, below
  // e4m3's own rounding: at the seed the outputs' errors are unchanged to
  // three digits, and the pass is 1.1 ms faster (H100, 2026-12-06,
  // docs/perf.md "The FP8 teacher").
  bool fp8_fast_accumulation = false;
};
// What only dev studies change (the row kernel's version, a stage clock)
// goes through kernels/lm_head/fused/study_hooks.hpp.

std::unique_ptr<Implementation> make_fused(FusedOptions options = {});

} // namespace kibench
