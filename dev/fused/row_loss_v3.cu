// Row kernel, version 3: the instructions per logit cut to what the math
// needs, and the next row already in L2. It ran in every pass of `fused`
// until row-v6 (kernels/lm_head/fused/row_kernel_v6.cu) took forward passes
// and then, measured with every lane in interleaved rounds, full ones
// (docs/perf-log.md); it stays here for the studies that compare them.
//
// Version 2 issued ~80 warp instructions per 32 logits where the arithmetic
// needs ~30 (Nsight Compute: instruction issue, not HBM or the SFU, was the
// limit). Same layout, cluster per row and three sweeps as version 2; the
// one idea here is to take the overhead out of the per-element loops:
//  - whole 16-byte vectors (all but at most one per CTA and row) run a
//    mask-free instantiation of each sweep; only the row's last vector runs
//    the masked one;
//  - tau = 1 is a template parameter (sigma = q, one softmax fewer), not a
//    run-time branch in every element;
//  - the mixture's log2 m is clamped at FLT_MIN instead of branching on
//    m > 0 (where both q and p underflow to 0 each term is 0 either way);
//  - sums run in two independent chains per vector, so the FMA latency
//    does not serialize the sweep;
//  - the row statistics reduce without a ex2 per butterfly round: a warp
//    first agrees on its maxima, rescales each lane's sums once, then adds;
//    the cluster's 128 warp partials are gathered by one warp of each CTA
//    (4 per lane, over distributed shared memory) in a fixed order, so the
//    serial 16-warp loop of version 2 and one CTA barrier go;
//  - one thread prefetches the CTA's slice of the next row into L2 with a
//    bulk prefetch (cp.async.bulk.prefetch.L2) as a row starts, so a row's
//    loads are L2 hits and the load sweep no longer waits on HBM latency;
//  - G' leaves with streaming stores: the next GEMMs read it from HBM in
//    any case, and it should not push the prefetched rows out of L2.
//  - with tau = 1 the load sweep scales only each vector's maximum, each
//    exponent is one FFMA (x log2 e - m),
//    shared memory holds z_t unscaled, and the mixture's m > 0 guard is an
//    added FLT_MIN, not a clamp: 3 of ~53 instructions a logit fewer.
//  - with the logit GEMMs' row statistics (Params::student_stats, tau = 1),
//    the load sweep only loads, and each CTA combines the row's per-tile
//    (max, sum) pairs itself, in a fixed order (so every CTA of the
//    cluster gets the same bits): the cluster reduction of the statistics
//    goes, and the target logit's dot product rides on the KL reduction.
// Measured on the H200: 0.875 ms a 2048-row chunk with G' (v2: 1.211 ms),
// 0.732 ms loss only (v2: 1.017): 1.38x, short of the ~2x that counting
// instructions predicted (docs/perf.md, fused-v4).
// Math, precision and outputs are those of versions 1 and 2 (row_loss.cu);
// negative temperatures are not special: the maxima are taken of the
// scaled values, whatever the scale's sign.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "dev/fused/row_kernels.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/row_loss_device.cuh"
#include "kernels/lm_head/fused/row_loss_math.cuh"

namespace kibench::gpu::fused::detail {

namespace {

constexpr int kBatch = 2;     // 16-byte vectors per thread and tensor in flight during the load
constexpr int kMaxValues = 7; // per reduction: up to 3 (max, sum) pairs and the target logit
constexpr int kPartials = kClusterSize * kWarps; // warp partials per cluster and reduction
constexpr int kGatherPerLane = kPartials / 32;
static_assert(kPartials % 32 == 0);

struct ExchangeV3 {
  float slot[2][kWarps][kMaxValues]; // [stage][warp], read by every CTA of the cluster
  float result[kMaxValues];          // the cluster's values, for every thread of this CTA
};

// Each warp's combined values into its slot of `stage` (lane 0 writes).
template <int P, int N>
__device__ __forceinline__ void publish_warp(float (&v)[N], int stage, ExchangeV3 &ex) {
  warp_combine<P>(v);
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) ex.slot[stage][threadIdx.x >> 5][i] = v[i];
  }
}

// Warp 0 combines the partials its lanes gathered into `acc` and leaves
// the result for the CTA; every thread of the CTA then reads it into v.
template <int P, int N>
__device__ __forceinline__ void share_result(float (&acc)[N], float (&v)[N], ExchangeV3 &ex) {
  if (threadIdx.x < 32) warp_combine<P>(acc);
  broadcast_from_thread0(acc, v, ex.result);
}

// Reduces v[] over the cluster; every thread of every CTA returns the same
// bits: warp butterflies, then warp 0 of each CTA gathers the 128 warp
// partials (partial e = rank * kWarps + warp; lane l takes e = l, l + 32,
// ...) and combines them in that order. Each stage has its own slots: a
// stage's slot is rewritten only in the next row, after the other stage's
// cluster barrier, which every reader of the earlier value has passed.
template <int P, int N>
__device__ void cluster_reduce(float (&v)[N], int stage, ExchangeV3 &ex, cg::cluster_group &cluster) {
  static_assert(N <= kMaxValues && 2 * P <= N);
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  publish_warp<P>(v, stage, ex);
  cluster.sync();
  float acc[N];
  if (warp == 0) {
#pragma unroll
    for (int k = 0; k < kGatherPerLane; ++k) {
      const int e = lane + 32 * k;
      const float *remote = cluster.map_shared_rank(&ex.slot[stage][e % kWarps][0], e / kWarps);
      float part[N];
#pragma unroll
      for (int i = 0; i < N; ++i) part[i] = remote[i];
      if (k == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) acc[i] = part[i];
      } else {
        combine_into<P>(acc, part);
      }
    }
  }
  share_result<P>(acc, v, ex);
}

// The pairs of tile `threadIdx.x` of a row, loaded as the row starts so
// that their latency passes under the load sweep: (-inf, 0) past the last
// tile. Tiles beyond kThreads (V > 131072) are read by the combine.
struct FirstTilePairs {
  float2 student, teacher;
};

__device__ __forceinline__ FirstTilePairs first_tile_pairs(const Params &p, int row) {
  const int j = static_cast<int>(threadIdx.x);
  if (j >= p.stats_tiles) return {make_float2(-INFINITY, 0.0f), make_float2(-INFINITY, 0.0f)};
  return {p.student_stats[row * p.stats_ld + j], p.teacher_stats[row * p.stats_ld + j]};
}

// The row's softmax statistics from the logit GEMMs' per-tile pairs:
// v = (m_a, m_b, s_a, s_b) with s 2^m the sum of 2^a over the row. Thread
// t combines tiles t, t + kThreads, ... in order, then the warps' butterflies
// and warp 0 over the 16 warp partials, as cluster_reduce does within a
// CTA; every CTA of the cluster reads the same pairs, so all agree. The
// warp partials pass through this CTA's slots of `stage`, the stage of the
// row's KL reduction, before that reduction writes them: the other CTAs
// read them only after its cluster barrier, and last read the previous
// values (two rows back) before the previous row's.
__device__ void combine_gemm_statistics(const Params &p, int row, const FirstTilePairs &first, float (&v)[4],
                                        int stage, ExchangeV3 &ex) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  v[0] = first.student.x;
  v[1] = first.teacher.x;
  v[2] = first.student.y;
  v[3] = first.teacher.y;
  const float2 *student = p.student_stats + row * p.stats_ld, *teacher = p.teacher_stats + row * p.stats_ld;
  for (int j = static_cast<int>(threadIdx.x) + kThreads; j < p.stats_tiles; j += kThreads) {
    const float2 a = student[j], b = teacher[j];
    const float part[4] = {a.x, b.x, a.y, b.y};
    combine_into<2>(v, part);
  }
  publish_warp<2>(v, stage, ex);
  __syncthreads();
  float acc[4] = {-INFINITY, -INFINITY, 0.0f, 0.0f};
  if (warp == 0 && lane < kWarps) {
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i] = ex.slot[stage][lane][i];
  }
  share_result<2>(acc, v, ex);
}

// The load sweep's work on one vector: the running statistics
// (load_statistics), then z_s and b into shared memory.
template <bool kFull, bool kUnitTemperature, int N>
__device__ __forceinline__ void load_vector(const Params &p, const Slice &s, int v, const uint4 &zs,
                                            const uint4 &zt, int lanes, float (&stats)[N]) {
  float z[kVector], b[kVector];
  unpack(zs, z);
  unpack(zt, b);
  load_statistics<kFull, kUnitTemperature>(p, z, b, lanes, stats);
  s.store(v, zs, b);
}

// The KL sweep's work on one vector in shared memory.
template <Divergence kDivergence, bool kGrad, bool kUnitTemperature, bool kFull>
__device__ __forceinline__ void kl_vector(const Params &p, const Slice &s, int v, int lanes,
                                          const RowStats &st, float &kl0, float &kl1) {
  float z[kVector], b[kVector];
  s.load(v, z, b);
  kl_terms<kDivergence, kUnitTemperature, kFull>(p, z, b, lanes, st, kl0, kl1);
  if constexpr (kDivergence == Divergence::mixture && kGrad) s.store_b(v, b);
}

// With the GEMMs' statistics (tau = 1) the row's log-sum-exps are known
// before its logits are read, so the load sweep takes the KL terms on the
// way (where the KL has a sweep of its own) and shared memory receives
// z_s and z_t, or log2(q/m) for the mixture's gradient, once.
template <Divergence kDivergence, bool kGrad, bool kFull>
__device__ __forceinline__ void load_kl_vector(const Params &p, const Slice &s, int v, const uint4 &zs,
                                               const uint4 &zt, int lanes, const RowStats &st, float &kl0,
                                               float &kl1) {
  float z[kVector], b[kVector];
  unpack(zt, b);
  if constexpr (kSeparateKlSweep<kDivergence, kGrad>) {
    unpack(zs, z);
    kl_terms<kDivergence, true, kFull>(p, z, b, lanes, st, kl0, kl1);
  }
  s.store(v, zs, b);
}

// The gradient sweep's work on one vector in shared memory: G' over z_s
// (streaming stores: the next GEMMs read it from HBM in any case).
template <Divergence kDivergence, bool kUnitTemperature, bool kFull>
__device__ __forceinline__ void gradient_vector(const Params &p, const Slice &s, int v, int lanes,
                                                const RowStats &st, const GradientCoefficients &c, float &kl1,
                                                uint4 *out_row) {
  float z[kVector], b[kVector], g[kVector];
  s.load(v, z, b);
  gradient_values<kDivergence, kUnitTemperature, kFull>(p, z, b, lanes, st, c, kl1, g);
  __stcs(out_row + v, pack(g));
}

template <Divergence kDivergence, bool kGrad, bool kUnitTemperature, bool kGemmStats>
__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kThreads, 2)
    row_kernel_kernel(const Params p, int rows) {
  static_assert(kUnitTemperature || !kGemmStats, "the GEMMs' statistics are of z log2 e: tau = 1 only");
  constexpr int P = kUnitTemperature ? 2 : 3; // softmax statistics per row
  constexpr int kStats = 2 * P + 1;           // and the target logit
  // The KL sums, and with the GEMMs' statistics the target logit's dot
  // product (no statistics reduction to ride on).
  constexpr int kKlValues = kGemmStats ? 3 : 2;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  __shared__ ExchangeV3 ex;
  extern __shared__ uint4 dynamic_smem[];
  const RowPart part = row_part(p, rank);
  const Slice s = Slice::at(dynamic_smem, p.slice);
  const int clusters = static_cast<int>(gridDim.x) / kClusterSize;
  const int tid = static_cast<int>(threadIdx.x);
  const auto slice_bytes = static_cast<unsigned>(part.vectors) * 16u;
  // The one thread that owns the partial vector, if there is one.
  const bool owns_tail = part.full < part.vectors && part.full % kThreads == tid;
  const int tail_lanes = part.count - part.full * kVector;

  // Every thread reads and writes only the slice vectors v = tid + k *
  // kThreads, in every sweep of every row, so the slice needs no barrier
  // between one row's gradient sweep and the next row's loads.
  // The KL reduction's exchange stage: 1, after the statistics' reduction
  // on stage 0; with the GEMMs' statistics it is a row's only cluster
  // reduction, so rows alternate stages (a CTA may write row r + 1's slot
  // while another still gathers row r's; row r + 2's waits for row r + 1's
  // barrier, past which every gather of row r is done).
  int kl_stage = 1;
  for (int row = static_cast<int>(blockIdx.x) / kClusterSize; row < rows; row += clusters) {
    const auto [out_row, teacher_row] = row_pointers(p, row, part);
    if (tid == 0 && row + clusters < rows && slice_bytes != 0)
      prefetch_row(p, row, clusters, part, slice_bytes);
    const std::int64_t y = p.target[row];
    if (y == p.ignore_index || y < 0 || y >= p.vocab) {
      // Every CTA of the cluster skips the same rows, with no barrier.
      if constexpr (kGrad) {
        for (int v = tid; v < part.vectors; v += kThreads) out_row[v] = make_uint4(0, 0, 0, 0);
      }
      if (rank == 0 && tid == 0) p.row_loss[row] = 0.0f;
      continue;
    }

    FirstTilePairs first_pairs{};
    if constexpr (kGemmStats) first_pairs = first_tile_pairs(p, row);
    // The target logit's first operands, in flight during the row's loads.
    const TargetLogitShare<kClusterSize * kThreads> target_share(p, row, y, rank * kThreads + tid);

    float stats[kStats];
#pragma unroll
    for (int i = 0; i < kStats; ++i) stats[i] = i < P ? -INFINITY : 0.0f;
    float kl[kKlValues] = {};
    RowStats st;
    if constexpr (kGemmStats) {
      kl_stage ^= 1;
      float combined[4];
      combine_gemm_statistics(p, row, first_pairs, combined, kl_stage, ex);
#pragma unroll
      for (int i = 0; i < 4; ++i) stats[i] = combined[i];
      st.lse_a = stats[0] + log2f(stats[P]); // log2 sum 2^a
      st.lse_b = stats[1] + log2f(stats[P + 1]);
      st.lse_raw = st.lse_a;
    }
    for (int base = tid; base < part.vectors; base += kBatch * kThreads) {
      uint4 zs[kBatch], zt[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int v = base + u * kThreads;
        if (v < part.vectors) {
          zs[u] = __ldcs(reinterpret_cast<const uint4 *>(out_row) + v);
          zt[u] = __ldcs(teacher_row + v);
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int v = base + u * kThreads;
        if constexpr (kGemmStats) {
          if (v < part.full)
            load_kl_vector<kDivergence, kGrad, true>(p, s, v, zs[u], zt[u], kVector, st, kl[0], kl[1]);
          else if (v < part.vectors)
            load_kl_vector<kDivergence, kGrad, false>(p, s, v, zs[u], zt[u], tail_lanes, st, kl[0], kl[1]);
        } else {
          if (v < part.full)
            load_vector<true, kUnitTemperature>(p, s, v, zs[u], zt[u], kVector, stats);
          else if (v < part.vectors)
            load_vector<false, kUnitTemperature>(p, s, v, zs[u], zt[u], tail_lanes, stats);
        }
      }
    }
    const float dot = target_share.dot(p);
    if constexpr (kGemmStats) {
      kl[2] = dot; // reduced with the KL sums
    } else {
      stats[2 * P] = dot;
      cluster_reduce<P>(stats, 0, ex, cluster);
      st.lse_a = stats[0] + log2f(stats[P]); // log2 sum 2^a
      st.lse_b = stats[1] + log2f(stats[P + 1]);
      if constexpr (kUnitTemperature) {
        st.lse_raw = st.lse_a;
      } else {
        st.lse_raw = stats[2] + log2f(stats[P + 2]);
      }
    }

    if constexpr (kSeparateKlSweep<kDivergence, kGrad>) {
      if constexpr (!kGemmStats) {
        for (int v = tid; v < part.full; v += kThreads)
          kl_vector<kDivergence, kGrad, kUnitTemperature, true>(p, s, v, kVector, st, kl[0], kl[1]);
        if (owns_tail)
          kl_vector<kDivergence, kGrad, kUnitTemperature, false>(p, s, part.full, tail_lanes, st, kl[0],
                                                                 kl[1]);
      }
      cluster_reduce<0>(kl, kl_stage, ex, cluster);
    }
    if constexpr (kGrad) {
      GradientCoefficients c;
      c.c_lin = p.weight_soft * p.grad_scale;
      c.c_const = -c.c_lin * kl[0];
      for (int v = tid; v < part.full; v += kThreads)
        gradient_vector<kDivergence, kUnitTemperature, true>(p, s, v, kVector, st, c, kl[1], out_row);
      if (owns_tail)
        gradient_vector<kDivergence, kUnitTemperature, false>(p, s, part.full, tail_lanes, st, c, kl[1],
                                                              out_row);
      if constexpr (kDivergence == Divergence::forward_kl) cluster_reduce<0>(kl, kl_stage, ex, cluster);
    }
    // The dot product was reduced with the KL sums (kGemmStats) or the
    // statistics.
    const float target_logit = (kGemmStats ? kl[kKlValues - 1] : stats[2 * P]) +
                               (p.student_bias != nullptr ? __bfloat162float(p.student_bias[y]) : 0.0f);
    if (rank == 0 && tid == 0) p.row_loss[row] = row_loss_value<kDivergence>(p, kl, st.lse_raw, target_logit);
  }
  // No CTA may leave while another still reads its exchange slots.
  cluster.sync();
}

template <Divergence kDivergence, bool kGrad, bool kUnitTemperature, bool kGemmStats = false>
void launch(const Params &p, std::int64_t rows, cudaStream_t stream) {
  auto *kernel = &row_kernel_kernel<kDivergence, kGrad, kUnitTemperature, kGemmStats>;
  const std::size_t smem = dynamic_smem_bytes(p.slice);
  const auto *key = reinterpret_cast<const void *>(kernel);
  raise_smem_limit(key, smem);
  const std::int64_t clusters = std::min<std::int64_t>(rows, resident_clusters(key, smem));
  kernel<<<dim3(kClusterSize * static_cast<unsigned>(clusters)), kThreads, smem, stream>>>(
      p, static_cast<int>(rows));
  CUDA_CHECK_LAUNCH();
}

template <Divergence kDivergence>
void launch_for(const Params &p, std::int64_t rows, bool grad, cudaStream_t stream) {
  if (p.student_stats != nullptr) {
    grad ? launch<kDivergence, true, true, true>(p, rows, stream)
         : launch<kDivergence, false, true, true>(p, rows, stream);
  } else if (p.unit_temperature) {
    grad ? launch<kDivergence, true, true>(p, rows, stream)
         : launch<kDivergence, false, true>(p, rows, stream);
  } else {
    grad ? launch<kDivergence, true, false>(p, rows, stream)
         : launch<kDivergence, false, false>(p, rows, stream);
  }
}

void launch_v3(const Params &p, std::int64_t rows, Divergence divergence, bool grad, cudaStream_t stream) {
  switch (divergence) {
  case Divergence::mixture:
    launch_for<Divergence::mixture>(p, rows, grad, stream);
    break;
  case Divergence::forward_kl:
    launch_for<Divergence::forward_kl>(p, rows, grad, stream);
    break;
  case Divergence::reverse_kl:
    launch_for<Divergence::reverse_kl>(p, rows, grad, stream);
    break;
  }
}

} // namespace
} // namespace kibench::gpu::fused::detail

namespace kibench::gpu::fused {

void launch_row_loss_v3(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  const detail::Params p = detail::row_loss_params(args);
  detail::launch_v3(p, args.rows, divergence_for(args.beta), args.write_grad, stream);
}

} // namespace kibench::gpu::fused
