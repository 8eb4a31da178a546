// The fused row kernel of the `fused` implementation: for one chunk of
// token rows whose student and teacher logits a GEMM has just written, it
// computes each row's loss term and, for a backward, overwrites the student
// logits with that row's gradient (kernels/lm_head/fused/row_loss.cu has the math).
// Plain types only: this header is included by host C++ and by nvcc.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kibench::gpu::fused {

// Which soft loss J the workload's beta selects (docs/loss-math.md).
enum class Divergence {
  mixture,    // 0 < beta < 1: generalized JSD against m = (1 - beta) q + beta p
  forward_kl, // beta == 0: KL(p || q)
  reverse_kl, // beta == 1: KL(q || p)
};

[[nodiscard]] Divergence divergence_for(double beta);

// log2 e: the kernel works in base 2 on a = z log2 e / tau, so the logit
// GEMMs' row statistics it takes (RowLossArgs::student_stats) are of z
// scaled by this (tau = 1).
inline constexpr float kLog2e = 1.4426950408889634f;

struct RowLossArgs {
  // z_s [rows, ld] bf16. With write_grad, row i is replaced by
  // G'_i = w_h softmax(z_s,i) + w_s dJ_i/dz_s,i (zeros for an ignored row):
  // N times the gradient row without its one-hot term -w_h onehot(y_i),
  // which one_hot.hpp adds in fp32. The grad GEMMs' fp32 results are divided
  // by N afterwards, so the bf16 rounding of G' does not depend on N.
  __nv_bfloat16 *student_logits = nullptr;
  const __nv_bfloat16 *teacher_logits = nullptr; // z_t [rows, ld] bf16
  std::int64_t rows = 0;
  std::int64_t vocab = 0;               // V
  std::int64_t ld = 0;                  // row stride of both logit buffers, a multiple of 8
  const std::int64_t *target = nullptr; // y [rows]
  // For the exact target logit of the cross-entropy: x_s [rows, Hs],
  // W_s [V, Hs] and b_s [V] (or null), in bf16.
  const __nv_bfloat16 *student_input = nullptr;
  const __nv_bfloat16 *student_weight = nullptr;
  const __nv_bfloat16 *student_bias = nullptr;
  std::int64_t student_hidden = 0;
  // [rows]: w_h CE_i + w_s J_i for a valid row, 0 for an ignored one.
  float *row_loss = nullptr;
  double beta = 0.5;
  double temperature = 1.0;
  double weight_hard = 0.5;
  double weight_soft = 0.5;
  std::int64_t ignore_index = -100;
  bool write_grad = true;
  // The logit GEMMs' row statistics (kernels/lm_head/fused/abt_gemm.hpp, AbtGemm::row_stats
  // with stats_scale kLog2e), or null: per row r and 256-column tile j,
  // (max, Σ 2^(x − max)) of x = z log2 e at [r · stats_ld + j], for z_s and
  // z_t. The kernel then takes the softmax statistics from them instead of
  // a sweep and a cluster reduction of its own. Temperature 1 only.
  const float2 *student_stats = nullptr;
  const float2 *teacher_stats = nullptr;
  std::int64_t stats_ld = 0;
};

// The largest vocabulary whose row slices fit one cluster's shared memory
// on `device`.
[[nodiscard]] std::int64_t row_loss_max_vocab(int device);

// Enqueues the shipped row kernel on `stream`; throws on a bad
// configuration: row-v6 with the compact cache where it applies (below),
// a row to one CTA where the rows fill the SMs and their re-read vectors
// stay in L2 (row_loss_v6_singles_pay), else in clusters of two CTAs.
void launch_row_loss(const RowLossArgs &args, cudaStream_t stream);

// Row kernel, version 6 (row_kernel_v6.cu): a row over a cluster of 2 CTAs
// of 1024 threads (or 4 of 512), twice row-v3's rows in flight, and only
// what fits of each slice in shared memory. Measured against row-v3 in the
// same process, lanes in interleaved rounds (H100, docs/perf.md): forward
// passes, the seed's row kernel 2.65 → 2.02 ms; full passes (with G'),
// the seed 35.63 → 34.04 ms, the GPT-2 case 0.742 → 0.699 ms, T 777
// 1.053 → 0.961 ms, and equal (+0.3 %) at H = 1024, where the row re-reads
// what shared memory does not hold and has no GEMM statistics.
//
// Enqueues version 6 on `stream`: clusters of 2 CTAs of 1024 threads
// (pairs, what `fused` runs) or of 4 CTAs of 512 (quads, for the studies).
// Throws on a bad configuration, as launch_row_loss does.
void launch_row_loss_v6_pairs(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v6_quads(const RowLossArgs &args, cudaStream_t stream);
// Pairs with the compact cache (row_kernel_v6.cu): where tau = 1, the
// mixture writes G' and the GEMMs wrote no row statistics, each cached
// vector holds q and log2(q/m) in fp16 (32 bytes instead of 48, so half
// again as many fit), copied in while the previous row finishes;
// elsewhere as pairs.
void launch_row_loss_v6_compact_pairs(const RowLossArgs &args, cudaStream_t stream);
// The same kernel with a row to one CTA of 1024 threads (singles, for the
// studies): twice the rows in flight of pairs and no cluster exchange, for
// vocabularies whose row fits one SM's shared memory (V <= ~57K compact).
void launch_row_loss_v6_compact_singles(const RowLossArgs &args, cudaStream_t stream);
// Two rows in flight an SM (studies): CTAs of 512 threads, two an SM, a
// row to one of them (singles; half of the SM's shared memory, so at the
// GPT-2 case 56 % of the row stays there and the rest is read again from
// L2) or to a cluster of two (pairs; each CTA's half row fits whole up to
// V ~ 57K). Each SM then runs two rows whose sweeps and barriers need not
// line up, where 1024-thread singles run one row's chain at a time.
// Measured on an H200 (docs/perf-log.md, "Two rows in flight an SM"): at
// most 2-5 % faster where a row keeps vectors in shared memory, slower on
// other such shapes; 5 % (the seed) to 19 % (a GPT-2 chunk) faster in a
// forward pass with the GEMMs' statistics, which keeps none.
void launch_row_loss_v6_compact_singles_512(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v6_compact_pairs_512(const RowLossArgs &args, cudaStream_t stream);
// Four and eight rows in flight an SM where a pass reads each vector once:
// singles of 256 or 128 threads (1024 threads an SM, as every v6 launch),
// which launch_row_loss runs where the rows fill them
// (row_loss_v6_read_once_rows_per_sm); every other pass as
// launch_row_loss runs it.
void launch_row_loss_v6_read_once_256(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v6_read_once_128(const RowLossArgs &args, cudaStream_t stream);
// Singles whose compact-cache rows take the exponentials of the last 2 (or
// 3) of each vector's 8 elements on the FMA pipe (ex2_fma), beside the
// SFU's: a study of the load and KL sweeps' SFU bound.
void launch_row_loss_v6_compact_singles_fma2(const RowLossArgs &args, cudaStream_t stream);
void launch_row_loss_v6_compact_singles_fma3(const RowLossArgs &args, cudaStream_t stream);
// Whether launch_row_loss runs singles for these arguments: where there
// are rows for every SM and what the rows in flight read again from
// global memory takes at most a quarter of L2 (nothing where a whole row
// fits one SM's shared memory, or where the pass reads each vector once:
// a forward pass with the GEMMs' statistics, which keeps no cache).
[[nodiscard]] bool row_loss_v6_singles_pay(const RowLossArgs &args);
// How many rows an SM launch_row_loss runs where the pass reads each vector
// once (a forward pass with the GEMMs' statistics, no cache): 8, 4 or 2
// (singles of 128, 256 or 512 threads: launch_row_loss_v6_read_once_128,
// _256, launch_row_loss_v6_compact_singles_512), the most whose resident
// CTAs the rows fill; 0 where the pass is not such or the rows fill none
// of them (row_loss_v6_singles_pay decides then).
[[nodiscard]] int row_loss_v6_read_once_rows_per_sm(const RowLossArgs &args);

// How version 6 lays out a row of `vocab` logits on the current GPU, for
// the studies to print: CTAs a row, threads a CTA, 16-byte vectors a CTA's
// slice has and keeps in shared memory, and clusters resident at once.
struct RowLossV6Layout {
  int ctas_per_row = 0, threads = 0;
  int slice_vectors = 0, cached_vectors = 0;
  std::size_t shared_bytes = 0;
  int resident_clusters = 0;
};
[[nodiscard]] RowLossV6Layout row_loss_v6_layout(std::int64_t vocab, int ctas_per_row, bool compact = false);

// Limits for the checks' launches (-1: none): at most `cache_vectors` of
// each CTA's slice in shared memory, so a check covers the re-read path on
// small vocabularies, and at most `clusters` clusters, so that each runs
// many rows of a short check (the row loop, the reductions' alternating
// exchange slots and the slice's reuse from row to row).
// The studies' schedule knobs ride along: the clusters of odd index start
// `stagger_ns` late; with `staged_wait` the compact kernel's load sweep
// waits for its cached vectors' copies slot by slot rather than for all of
// them first. Both off in what ships.
struct RowLossV6Limits {
  std::int64_t cache_vectors = -1;
  std::int64_t clusters = -1;
  std::int64_t stagger_ns = 0;
  bool staged_wait = false;
};
void set_row_loss_v6_limits(RowLossV6Limits limits);

// Those limits for one scope (none again when it ends).
class ScopedRowLossV6Limits {
public:
  explicit ScopedRowLossV6Limits(RowLossV6Limits limits) { set_row_loss_v6_limits(limits); }
  ~ScopedRowLossV6Limits() { set_row_loss_v6_limits({}); }
  ScopedRowLossV6Limits(const ScopedRowLossV6Limits &) = delete;
  ScopedRowLossV6Limits &operator=(const ScopedRowLossV6Limits &) = delete;
};

// A row kernel as the fused implementation calls it: the shipped one
// (launch_row_loss), or another version from dev/fused/ or row-v3 or row-v6
// alone, that a study runs in its place. All compute the same outputs.
struct RowKernel {
  const char *name = "v6c: 1x128, 1x256 or 1x512 where a pass reads each vector once (the most rows an SM "
                     "its rows fill), 1x1024 where rows fill the SMs and re-reads fit L2, else 2x1024";
  void (*launch)(const RowLossArgs &, cudaStream_t) = launch_row_loss;
};

} // namespace kibench::gpu::fused
