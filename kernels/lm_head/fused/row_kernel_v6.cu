// Row kernel, version 6: twice the rows in flight, each row split over
// fewer CTAs, and only what fits of it in shared memory. `fused` runs it
// in every pass (launch_row_loss, row_loss.hpp); the outcome of the
// prediction below, and the measurements it ships on, follow it.
//
// Row-v3 (dev/fused/row_loss_v3.cu) keeps a whole row in the shared
// memory of a cluster of 8 CTAs, two to an SM (6 bytes a logit: 770 KB at
// V = 128256, four SMs a row). 30 such clusters fit on 132 SMs (clusters of
// four SMs do not tile the GPCs; 12 SMs idle), and each row is a chain of
// loads, reductions over 8 CTAs and the gradient sweep that no other row
// of its cluster overlaps: Nsight Compute put 39 % of the warps' stalls on
// the CTA and cluster barriers, and trimming instructions gained 1 %
// (docs/perf.md, row-v3). In a pass it moves a chunk's rows at about half
// the HBM rate (3.2 ms at the seed against 1.5 ms for its 6 bytes a logit).
//
// Version 6 gives a row to a cluster of kCluster CTAs with the SM's whole
// shared memory between them: 2 CTAs of 1024 threads (one an SM) or 4 of
// 512 (two an SM), so ~64 rows are in flight instead of 30, and a row's
// reductions join 2 or 4 CTAs instead of 8. A CTA's slice of the row (half
// or a quarter: 64128 or 32064 logits at the seed) no longer fits in its
// shared memory: the first `cached` vectors of each slice stay there as in
// v3 (bf16 z_s and fp32 b, 48 bytes a vector), and the rest, ~100 KB a
// CTA, is read again from global memory by each later sweep. Those reads
// are meant to hit L2: 132 SMs' worth is ~13 MB of the 50 MB, the first
// read leaves them in L2 (ld.global.cg) and the last one marks them for
// eviction (ld.global.cs). HBM traffic stays v3's 6 bytes a logit if they
// do. Each re-read vector costs its SFU work again (the KL terms before
// the mixture's G', whose q G' then takes), about 40 % of the row's vectors
// at the seed.
//
// The arithmetic of each vector is v3's own (row_loss_math.cuh), so at
// tau = 1 a vector gives the same bits from shared memory as from global
// memory (at tau != 1 its log2 q can differ in the last bit: teacher_form);
// the order of the sums over a row differs from v3's, as the CTAs and
// warps that hold the partials differ. Reductions are in fixed order (warp
// butterflies, the CTA's warps in order, the cluster's ranks in order), and
// which vectors are cached depends only on the shape and the GPU, so the
// results are the same bits run after run.
//
// Prediction (written before any device time): the row kernel in the
// seed's pass from 3.2 ms to ~1.8–2.2 ms (between its HBM floor, 1.5 ms,
// and twice its rows in flight), `fused` from 1.16x to ~1.12x the floor;
// at H = 1024, where the row kernel runs without the GEMMs' statistics
// (three sweeps, two of them over the re-read vectors), from 4.1 to
// ~2.5–3 ms. If the re-reads miss L2, the kernel moves ~10 bytes a logit
// and the gain shrinks or turns into a loss.
//
// Outcome (H100 80GB HBM3, docs/perf-log.md, row-v6, "row-v6 where a
// pass writes no G'" and "Row-v6 in full passes"). The prediction missed
// at the seed: 3.43 to 2.93 ms with G' (not 1.8–2.2), and equal at
// H = 1024 (4.17 to 4.10 ms), where the re-read vectors' sweeps and the G'
// writes cost what the rows in flight win. Without G' each logit is read
// once: the seed's forward pass 2.67 to 2.00 ms in the row kernel. Where
// the whole slice fits in shared memory (V <= 77152 with 2 CTAs) it gains
// most: 0.25 to 0.15 ms at T 777, V 32001; 3.26 to 2.12 ms at T 8192,
// V 50257. With every lane timed in interleaved rounds it was nowhere
// slower than row-v3, and it runs in every pass. Clusters of 2 CTAs of
// 1024 threads ship; 4 of 512 stay for the studies (faster only at the
// GPT-2 case, 0.21 against 0.23 ms, and slower at the seed).
//
// Where the kernel takes its own statistics at tau = 1 and the mixture
// writes G', it runs with a compact cache and the next row's copies in
// flight (below, "The compact cache"): 6-9 % faster there.
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <cuda_fp16.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/row_loss.hpp"
#include "kernels/lm_head/fused/row_loss_device.cuh"
#include "kernels/lm_head/fused/row_loss_math.cuh"

namespace kibench::gpu::fused {

namespace {

using detail::kVector;
using detail::Params;
using detail::RowPart;
using detail::RowStats;
using detail::Slice;
namespace cg = cooperative_groups;

constexpr int kBatch = 2;     // 16-byte vectors per thread and tensor in flight during the load
constexpr int kMaxValues = 7; // per reduction: up to 3 (max, sum) pairs and the target logit
// Bytes of each tensor of the CTA's slice of its next row prefetched into
// L2 as a row starts, so that the next row's first loads do not wait on
// HBM after the reductions (v3 prefetches its whole next slice; here the
// rows in flight are twice as many and L2 also holds the re-read vectors).
constexpr unsigned kPrefetchBytes = 32 * 1024;
// Shared memory a cached vector takes: in the Slice, z_s in bf16 and b in
// fp32; in the CompactSlice, two 16-byte halves.
constexpr std::size_t kVectorBytes = detail::dynamic_smem_bytes(kVector);
constexpr std::size_t kCompactVectorBytes = 2 * sizeof(uint4);
template <bool kCompact>
constexpr std::size_t kCachedVectorBytes = kCompact ? kCompactVectorBytes : kVectorBytes;

// The compact cache (32 bytes a vector, not 48), where the row ends in G'
// (tau = 1, the mixture, a backward) and the kernel takes its own softmax
// statistics (no GEMM statistics: the GPT-2 case, H = 1024). A slot first
// holds the raw bf16 z_s and z_t of its vector, copied there
// asynchronously while the previous row's gradient sweep ran
// (copy_cached_async), so the load sweep finds this row's cached vectors
// in shared memory; once the KL sweep has taken the vector's terms the
// slot holds what the gradient sweep needs instead: q 2^15 and
// x = log2(q/m), in fp16 (G' = q (c_lin x + c_const + w_h),
// gradient_values). Half again as many vectors fit, so fewer are read
// again from L2, and the gradient sweep spends no special-function
// operation on a cached vector. q is scaled by 2^15 (exact) so that the q
// of a row of 128K logits, ~1e-5, is a normal fp16 number (down to 2^-29
// q keeps all 11 bits); the rounding of q and x to 11 bits adds at most
// 2^-12 of each term to G', which is itself rounded to bf16 (8 bits)
// after.
//
// Measured (H100, docs/perf-log.md, "Row-v6's compact cache"): the row
// kernel 8.5 % faster at the GPT-2 case and at H = 1024; with the GEMMs'
// statistics (the seed) the compact cache alone gained nothing, and the
// copies in flight cost 9 %, so those rows keep the 48-byte Slice.
constexpr float kQScale = 32768.0f; // 2^15: q <= 1 stays below fp16's 65504

__device__ __forceinline__ uint4 pack_half(const float (&v)[kVector], float scale) {
  uint4 out;
  auto *pairs = reinterpret_cast<__half2 *>(&out);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) pairs[i] = __floats2half2_rn(v[2 * i] * scale, v[2 * i + 1] * scale);
  return out;
}

__device__ __forceinline__ void unpack_half(const uint4 &in, float (&v)[kVector], float scale) {
  const auto *pairs = reinterpret_cast<const __half2 *>(&in);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) {
    const float2 f = __half22float2(pairs[i]);
    v[2 * i] = f.x * scale;
    v[2 * i + 1] = f.y * scale;
  }
}

struct CompactSlice {
  uint4 *first;  // [cached]: z_s, then q 2^15
  uint4 *second; // [cached]: z_t, then log2(q/m)

  __device__ static CompactSlice at(uint4 *smem, int cached) { return CompactSlice{smem, smem + cached}; }
  __device__ void load_raw(int v, float (&z)[kVector], float (&b)[kVector]) const {
    detail::unpack(first[v], z);
    detail::unpack(second[v], b);
  }
  __device__ void store_terms(int v, const float (&q)[kVector], const float (&x)[kVector]) const {
    first[v] = pack_half(q, kQScale);
    second[v] = pack_half(x, 1.0f);
  }
  __device__ void load_terms(int v, float (&q)[kVector], float (&x)[kVector]) const {
    unpack_half(first[v], q, 1.0f / kQScale);
    unpack_half(second[v], x, 1.0f);
  }
  // Starts the copy of vector v of a row's slice (z_s, z_t) into slot v,
  // asynchronously (cp.async: no registers held while it flies); visible
  // to this thread after wait_copies().
  __device__ void copy_raw_async(int v, const detail::RowPointers &row) const {
    copy_16_async(first + v, row.student + v);
    copy_16_async(second + v, row.teacher + v);
  }
  __device__ static void copy_16_async(uint4 *to, const uint4 *from) {
    const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(from) : "memory");
  }
  // Closes this thread's copies started since the last commit into one
  // group (a slot's copy is its own group, so that the load sweep can wait
  // for a row's copies in the order they were started).
  __device__ static void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
  // Waits for every copy this thread started.
  __device__ static void wait_copies() { asm volatile("cp.async.wait_all;" ::: "memory"); }
  // Waits until at most `pending` of this thread's groups are in flight
  // (the oldest land first); more than 7 waits as for 7, which is safe.
  __device__ static void wait_copies_but(int pending) {
    switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    }
  }
};

// The compact kernel keeps the next row's cached vectors in flight while
// this row's gradient sweep runs. A slot v belongs to thread v mod the
// CTA's threads in every sweep, so a thread that has written G' from its
// slot can start the next row's copy into it at once, and waits only for
// its own copies before it reads them: no barrier guards the slots. This
// thread's slots of `row` (those of a cached slice of `cached` vectors).
template <int kThreads>
__device__ __forceinline__ void copy_cached_async(const CompactSlice &cs, const detail::RowPointers &row,
                                                  int cached) {
  for (int v = static_cast<int>(threadIdx.x); v < cached; v += kThreads) {
    cs.copy_raw_async(v, row);
    CompactSlice::commit();
  }
}

// The studies' schedule of a launch (RowLossV6Limits): the clusters of odd
// index start `stagger_ns` late, so that half the SMs load while the other
// half compute; `staged_wait`: the compact kernel's load sweep waits for
// its cached vectors' copies slot by slot, in the order they were started
// (one cp.async group a slot), instead of for all of them before it
// starts, so that its arithmetic on the first slots runs while the last
// ones are still in flight. Measured on an H100 (docs/perf-log.md, "The
// row kernel's schedule…"): neither helps (stagger at most 2 %, staged
// waits 1-2 % slower), so both stay off in what ships.
struct Schedule {
  std::int64_t stagger_ns = 0;
  bool staged_wait = false;
};

__device__ __forceinline__ std::uint64_t global_time_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

std::atomic<std::int64_t> g_cache_limit{-1}; // set_row_loss_v6_limits
std::atomic<std::int64_t> g_cluster_limit{-1};
std::atomic<std::int64_t> g_stagger_ns{0};
std::atomic<bool> g_staged_wait{false};

template <int kWarps> struct ExchangeV6 {
  float warp[kWarps][kMaxValues]; // this CTA's warp partials (read by its warp 0 only)
  float cta[2][kMaxValues];       // [stage]: this CTA's partial, read by every CTA of the cluster
  float result[kMaxValues];       // the reduced values, for every thread of this CTA
};

template <int P, int N> __device__ __forceinline__ void set_identity(float (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = i < P ? -INFINITY : 0.0f;
}

// The CTA's values combined, in warp 0's lanes (every lane the same bits):
// warp butterflies, then warp 0 over the warps' partials in order.
template <int P, int N, int kWarps>
__device__ __forceinline__ void cta_combine(float (&v)[N], ExchangeV6<kWarps> &ex, float (&acc)[N]) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  detail::warp_combine<P>(v);
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) ex.warp[warp][i] = v[i];
  }
  __syncthreads();
  if (warp == 0) {
    if (lane < kWarps) {
#pragma unroll
      for (int i = 0; i < N; ++i) acc[i] = ex.warp[lane][i];
    } else {
      set_identity<P>(acc);
    }
    detail::warp_combine<P>(acc);
  }
}

// Reduces v[] over the cluster; every thread of every CTA returns the same
// bits (each CTA's warp 0 combines the ranks' partials, rank r in lane r).
// Consecutive reductions alternate `stage`: a CTA writes cta[stage] again
// only after the next reduction's cluster barrier, which every reader of
// the earlier value passes only after reading it.
template <int P, int N, int kCluster, int kWarps>
__device__ void cluster_reduce(float (&v)[N], int stage, ExchangeV6<kWarps> &ex, cg::cluster_group &cluster) {
  static_assert(N <= kMaxValues && 2 * P <= N && kCluster <= 32);
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  float acc[N];
  cta_combine<P>(v, ex, acc);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) ex.cta[stage][i] = acc[i];
  }
  cluster.sync();
  if (warp == 0) {
    if (lane < kCluster) {
      const float *remote = cluster.map_shared_rank(&ex.cta[stage][0], lane);
#pragma unroll
      for (int i = 0; i < N; ++i) acc[i] = remote[i];
    } else {
      set_identity<P>(acc);
    }
    detail::warp_combine<P>(acc);
  }
  detail::broadcast_from_thread0(acc, v, ex.result);
}

// Calls f(std::true_type) for a whole vector and f(std::false_type) for
// the slice's partial last one; nothing past the slice.
template <class F> __device__ __forceinline__ void on_vector(int v, const RowPart &part, F &&f) {
  if (v < part.full)
    f(std::true_type{});
  else if (v < part.vectors)
    f(std::false_type{});
}

// kFmaLanes: the last kFmaLanes elements of each vector take their
// exponentials on the FMA pipe (ex2_fma, row_loss_math.cuh) in the load
// and KL sweeps: a study (launch_row_loss_v6_compact_singles_fma2/3), 0
// in what ships: 3-6 % slower on an H100, so the SFU does not bound the
// sweeps (docs/perf-log.md, "The row kernel's schedule…").
template <Divergence kDivergence, bool kGrad, bool kUnitTemperature, bool kGemmStats, bool kCompact,
          int kCluster, int kThreads, int kFmaLanes = 0>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1024 / kThreads)
    row_loss_v6_kernel(const Params p, int rows, int cached_vectors, const Schedule schedule) {
  static_assert(kUnitTemperature || !kGemmStats, "the GEMMs' statistics are of z log2 e: tau = 1 only");
  static_assert(
      !kCompact || (kDivergence == Divergence::mixture && kGrad && kUnitTemperature && !kGemmStats),
      "the compact cache holds the mixture's q and log2(q/m) at tau = 1, for G', where the row kernel "
      "takes its own statistics");
  constexpr int kWarps = kThreads / 32;
  constexpr int P = kUnitTemperature ? 2 : 3; // softmax statistics per row
  constexpr int kStats = 2 * P + 1;           // and the target logit
  constexpr int kKlValues = kGemmStats ? 3 : 2;
  constexpr bool kSeparateKl = detail::kSeparateKlSweep<kDivergence, kGrad>;
  // Whether the load sweep's read of a vector outside shared memory is its
  // last (no KL sweep of its own and no gradient sweep follow).
  constexpr bool kLoadIsLastRead = !kGrad && (kGemmStats || !kSeparateKl);
  // With the GEMMs' statistics and no KL sweep of its own (forward KL with
  // G'), the load sweep computes nothing from a vector outside shared
  // memory: it reads only the cached ones, and the gradient sweep the rest.
  constexpr bool kLoadOnlyCached = kGemmStats && !kSeparateKl;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  __shared__ ExchangeV6<kWarps> ex;
  extern __shared__ uint4 dynamic_smem[];
  const RowPart part = detail::row_part(p, rank);
  const int cached = min(cached_vectors, part.vectors);
  const Slice s = Slice::at(dynamic_smem, cached * kVector);
  const CompactSlice cs = CompactSlice::at(dynamic_smem, cached);
  const int clusters = static_cast<int>(gridDim.x) / kCluster;
  const int tid = static_cast<int>(threadIdx.x);
  const int tail_lanes = part.count - part.full * kVector;
  // L2 prefetch of the next row's slice as a row starts: its first bytes,
  // or for the compact kernel, whose slots are filled by copies started a
  // row ahead (copy_cached_async), the vectors past them.
  const int prefetch_from = kCompact ? cached : 0;
  const auto prefetch_bytes = min(static_cast<unsigned>(part.vectors - prefetch_from) * 16u, kPrefetchBytes);
  auto lanes_of = [&](auto full) { return decltype(full)::value ? kVector : tail_lanes; };

  if (schedule.stagger_ns > 0 && (blockIdx.x / kCluster) % 2 == 1) {
    const std::uint64_t start = global_time_ns();
    while (global_time_ns() - start < static_cast<std::uint64_t>(schedule.stagger_ns)) __nanosleep(256);
  }
  if constexpr (kCompact) {
    if (const int first = static_cast<int>(blockIdx.x) / kCluster; first < rows)
      copy_cached_async<kThreads>(cs, detail::row_pointers(p, first, part), cached);
  }
  // This thread's cached slots (one copy group each in the compact kernel).
  const int own_slots = tid < cached ? (cached - 1 - tid) / kThreads + 1 : 0;

  int stage = 0;
  for (int row = static_cast<int>(blockIdx.x) / kCluster; row < rows; row += clusters) {
    const auto [out_row, teacher_row] = detail::row_pointers(p, row, part);
    const bool has_next = row + clusters < rows;
    if (tid == 0 && has_next && prefetch_bytes != 0) {
      const detail::RowPointers next = detail::row_pointers(p, row + clusters, part);
      detail::prefetch_l2(next.student + prefetch_from, prefetch_bytes);
      detail::prefetch_l2(next.teacher + prefetch_from, prefetch_bytes);
    }
    const std::int64_t y = p.target[row];
    if (detail::skip_ignored_row<kGrad, kThreads>(p, row, y, rank, tid, part, out_row)) {
      if constexpr (kCompact) {
        // This row's copies were not wanted: the next row's go into the
        // same slots once they have landed.
        CompactSlice::wait_copies();
        if (has_next) copy_cached_async<kThreads>(cs, detail::row_pointers(p, row + clusters, part), cached);
      }
      continue;
    }

    // The target logit's first operands, in flight during the row's loads.
    const detail::TargetLogitShare<kCluster * kThreads> target_share(p, row, y, rank * kThreads + tid);

    float stats[kStats];
    set_identity<P>(stats);
    float kl[kKlValues] = {};
    RowStats st;
    if constexpr (kGemmStats) {
      // The row's softmax statistics from the GEMMs' per-tile pairs: every
      // CTA combines all of them in the same order, so all agree.
      float v[4] = {-INFINITY, -INFINITY, 0.0f, 0.0f};
      const float2 *student = p.student_stats + row * p.stats_ld,
                   *teacher = p.teacher_stats + row * p.stats_ld;
      for (int j = tid; j < p.stats_tiles; j += kThreads) {
        const float2 a = student[j], b = teacher[j];
        const float pair[4] = {a.x, b.x, a.y, b.y};
        detail::combine_into<2>(v, pair);
      }
      float acc[4];
      cta_combine<2>(v, ex, acc);
      detail::broadcast_from_thread0(acc, v, ex.result);
      st.lse_a = v[0] + log2f(v[2]); // log2 sum 2^a
      st.lse_b = v[1] + log2f(v[3]);
      st.lse_raw = st.lse_a;
    }

    // Load sweep: every vector from global memory once; the first `cached`
    // of the slice also into shared memory (the compact kernel's are there
    // already, copied during the previous row).
    if constexpr (kCompact) {
      if (!schedule.staged_wait) CompactSlice::wait_copies();
    }
    const int load_end = kLoadOnlyCached ? cached : part.vectors;
    for (int base = tid; base < load_end; base += kBatch * kThreads) {
      if constexpr (kCompact) {
        // This batch's last cached slot is this thread's slot `last`; the
        // groups started after it may still fly.
        if (schedule.staged_wait && base < cached) {
          const int last = min((base - tid) / kThreads + kBatch - 1, own_slots - 1);
          CompactSlice::wait_copies_but(own_slots - 1 - last);
        }
      }
      uint4 zs[kBatch], zt[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int v = base + u * kThreads;
        if (v < cached) {
          if constexpr (kCompact) {
            zs[u] = cs.first[v];
            zt[u] = cs.second[v];
          } else {
            zs[u] = __ldcs(reinterpret_cast<const uint4 *>(out_row) + v);
            zt[u] = __ldcs(teacher_row + v);
          }
        } else if (v < load_end) {
          const auto *student_vector = reinterpret_cast<const uint4 *>(out_row) + v;
          zs[u] = kLoadIsLastRead ? __ldcs(student_vector) : __ldcg(student_vector);
          zt[u] = kLoadIsLastRead ? __ldcs(teacher_row + v) : __ldcg(teacher_row + v);
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int v = base + u * kThreads;
        if constexpr (kLoadOnlyCached) {
          if (v >= load_end) break; // v grows with u
        }
        on_vector(v, part, [&](auto full) {
          float b[kVector];
          detail::unpack(zt[u], b);
          if constexpr (kGemmStats) {
            if constexpr (kSeparateKl) {
              float z[kVector];
              detail::unpack(zs[u], z);
              detail::kl_terms<kDivergence, true, decltype(full)::value>(p, z, b, lanes_of(full), st, kl[0],
                                                                         kl[1]);
            }
          } else {
            float z[kVector];
            detail::unpack(zs[u], z);
            detail::load_statistics<decltype(full)::value, kUnitTemperature, kStats, kFmaLanes>(
                p, z, b, lanes_of(full), stats);
          }
          if constexpr (!kCompact) {
            if (v < cached) s.store(v, zs[u], b);
          }
        });
      }
    }
    const float dot = target_share.dot(p);
    if constexpr (kGemmStats) {
      kl[2] = dot; // reduced with the KL sums
    } else {
      stats[2 * P] = dot;
      stage ^= 1;
      cluster_reduce<P, kStats, kCluster>(stats, stage, ex, cluster);
      st.lse_a = stats[0] + log2f(stats[P]);
      st.lse_b = stats[1] + log2f(stats[P + 1]);
      st.lse_raw = kUnitTemperature ? st.lse_a : stats[2] + log2f(stats[P + 2]);
    }

    // A vector outside shared memory as the sweeps see it: z_s and b.
    auto reload = [&](int v, float(&z)[kVector], float(&b)[kVector], bool last_read) {
      const uint4 zs = last_read ? __ldcs(reinterpret_cast<const uint4 *>(out_row) + v)
                                 : __ldcg(reinterpret_cast<const uint4 *>(out_row) + v);
      const uint4 zt = last_read ? __ldcs(teacher_row + v) : __ldcg(teacher_row + v);
      detail::unpack(zs, z);
      detail::unpack(zt, b);
      detail::teacher_form<kUnitTemperature>(p, b);
    };

    if constexpr (kSeparateKl) {
      if constexpr (!kGemmStats) {
        for (int v = tid; v < part.vectors; v += kThreads) {
          on_vector(v, part, [&](auto full) {
            constexpr bool kFull = decltype(full)::value;
            float z[kVector], b[kVector];
            if (v < cached) {
              if constexpr (kCompact)
                cs.load_raw(v, z, b);
              else
                s.load(v, z, b);
            } else {
              reload(v, z, b, /*last_read=*/!kGrad);
            }
            if constexpr (kCompact) {
              float q[kVector];
              detail::kl_terms<kDivergence, kUnitTemperature, kFull, kFmaLanes>(p, z, b, lanes_of(full), st,
                                                                                kl[0], kl[1], q);
              if (v < cached) cs.store_terms(v, q, b);
            } else {
              detail::kl_terms<kDivergence, kUnitTemperature, kFull, kFmaLanes>(p, z, b, lanes_of(full), st,
                                                                                kl[0], kl[1]);
              if constexpr (kDivergence == Divergence::mixture && kGrad) {
                if (v < cached) s.store_b(v, b);
              }
            }
          });
        }
      }
      stage ^= 1;
      cluster_reduce<0, kKlValues, kCluster>(kl, stage, ex, cluster);
    }
    if constexpr (kGrad) {
      const detail::RowPointers next_row =
          detail::row_pointers(p, has_next ? row + clusters : row, part); // used where has_next
      detail::GradientCoefficients c;
      c.c_lin = p.weight_soft * p.grad_scale;
      c.c_const = -c.c_lin * kl[0];
      for (int v = tid; v < part.vectors; v += kThreads) {
        on_vector(v, part, [&](auto full) {
          constexpr bool kFull = decltype(full)::value;
          float z[kVector], b[kVector], g[kVector];
          if (v < cached) {
            if constexpr (kCompact) {
              cs.load_terms(v, z, b); // q and log2(q/m)
              detail::gradient_values<kDivergence, kUnitTemperature, kFull>(p, z, b, lanes_of(full), st, c,
                                                                            kl[1], g, z);
            } else {
              s.load(v, z, b);
              detail::gradient_values<kDivergence, kUnitTemperature, kFull>(p, z, b, lanes_of(full), st, c,
                                                                            kl[1], g);
            }
          } else {
            reload(v, z, b, /*last_read=*/true);
            if constexpr (kDivergence == Divergence::mixture) {
              // log2(q/m) in place of b, as the KL sweep left it in shared
              // memory for the cached vectors (the sums are not wanted
              // again), and q with it, so that G' does not compute it twice.
              float unused0 = 0.0f, unused1 = 0.0f, q[kVector];
              detail::kl_terms<kDivergence, kUnitTemperature, kFull, kFmaLanes>(p, z, b, lanes_of(full), st,
                                                                                unused0, unused1, q);
              detail::gradient_values<kDivergence, kUnitTemperature, kFull>(p, z, b, lanes_of(full), st, c,
                                                                            kl[1], g, q);
            } else {
              detail::gradient_values<kDivergence, kUnitTemperature, kFull>(p, z, b, lanes_of(full), st, c,
                                                                            kl[1], g);
            }
          }
          __stcs(out_row + v, detail::pack(g));
          if constexpr (kCompact) {
            // Slot v is free once G' is written (it was computed from it).
            if (v < cached && has_next) {
              cs.copy_raw_async(v, next_row);
              CompactSlice::commit();
            }
          }
        });
      }
      if constexpr (kDivergence == Divergence::forward_kl) {
        stage ^= 1;
        cluster_reduce<0, kKlValues, kCluster>(kl, stage, ex, cluster);
      }
    }
    const float target_logit = (kGemmStats ? kl[kKlValues - 1] : stats[2 * P]) +
                               (p.student_bias != nullptr ? __bfloat162float(p.student_bias[y]) : 0.0f);
    if (rank == 0 && tid == 0)
      p.row_loss[row] = detail::row_loss_value<kDivergence>(p, kl, st.lse_raw, target_logit);
  }
  // No CTA may leave while another still reads its exchange slots.
  cluster.sync();
}

// Per device: shared memory an SM has, what each CTA gives up to the
// system, and the L2 cache's bytes (row_loss_v6_singles_pay).
struct MemoryLimits {
  std::size_t per_sm = 0, reserved_per_block = 0, per_block_optin = 0;
  std::size_t l2 = 0;
};

MemoryLimits memory_limits() {
  static std::mutex mutex;
  static std::map<int, MemoryLimits> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard lock(mutex);
  if (auto it = known.find(device); it != known.end()) return it->second;
  MemoryLimits l;
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  l.per_sm = static_cast<std::size_t>(value);
  CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrReservedSharedMemoryPerBlock, device));
  l.reserved_per_block = static_cast<std::size_t>(value);
  CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  l.per_block_optin = static_cast<std::size_t>(value);
  CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, device));
  l.l2 = static_cast<std::size_t>(value);
  known.emplace(device, l);
  return l;
}

struct Geometry {
  int slice = 0, cached_vectors = 0;
  std::size_t smem = 0;
};

// The slice and how many of its vectors shared memory holds: as many as
// 1024 / kThreads CTAs an SM leave room for beside `kernel`'s static
// shared memory, at most the whole slice and at most the study's limit
// (set_row_loss_v6_limits).
template <int kCluster, int kThreads, bool kCompact>
Geometry geometry(const void *kernel, std::int64_t vocab) {
  Geometry g;
  g.slice = detail::slice_for(vocab, kCluster);
  const MemoryLimits l = memory_limits();
  constexpr int kCtasPerSm = 1024 / kThreads;
  const std::size_t per_cta = std::min(l.per_block_optin, l.per_sm / kCtasPerSm - l.reserved_per_block);
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const std::size_t static_bytes = attributes.sharedSizeBytes;
  if (static_bytes >= per_cta) throw std::runtime_error("row kernel v6: no shared memory left for the row");
  const auto capacity = static_cast<std::int64_t>((per_cta - static_bytes) / kCachedVectorBytes<kCompact>);
  std::int64_t cached = std::min<std::int64_t>(capacity, g.slice / kVector);
  if (const std::int64_t limit = g_cache_limit.load(); limit >= 0) cached = std::min(cached, limit);
  g.cached_vectors = static_cast<int>(cached);
  g.smem = static_cast<std::size_t>(cached) * kCachedVectorBytes<kCompact>;
  return g;
}

// Whether a pass reads each vector once and never again: a forward pass
// with the GEMMs' statistics (its load sweep takes the KL terms). Its
// shared-memory cache would be written and never read.
constexpr bool reads_once(bool grad, bool gemm_stats) { return !grad && gemm_stats; }

// uncached_read_once: a pass that reads each vector once keeps none in
// shared memory (the compact launchers, which `fused` runs; the plain
// pairs and quads keep the write-only cache for the studies to compare).
template <Divergence kDivergence, bool kGrad, bool kUnitTemperature, bool kGemmStats, bool kCompact,
          int kCluster, int kThreads, int kFmaLanes = 0>
void launch(Params p, std::int64_t rows, bool uncached_read_once, cudaStream_t stream) {
  auto *kernel = &row_loss_v6_kernel<kDivergence, kGrad, kUnitTemperature, kGemmStats, kCompact, kCluster,
                                     kThreads, kFmaLanes>;
  const auto *key = reinterpret_cast<const void *>(kernel);
  const auto g = uncached_read_once && reads_once(kGrad, kGemmStats)
                     ? Geometry{.slice = detail::slice_for(p.vocab, kCluster)}
                     : geometry<kCluster, kThreads, kCompact>(key, p.vocab);
  p.slice = g.slice;
  detail::raise_smem_limit(key, g.smem);
  std::int64_t clusters =
      std::min<std::int64_t>(rows, detail::resident_clusters(key, g.smem, kCluster, kThreads));
  if (const std::int64_t limit = g_cluster_limit.load(); limit > 0) clusters = std::min(clusters, limit);
  const Schedule schedule{.stagger_ns = g_stagger_ns.load(), .staged_wait = g_staged_wait.load()};
  kernel<<<dim3(static_cast<unsigned>(kCluster * clusters)), kThreads, g.smem, stream>>>(
      p, static_cast<int>(rows), g.cached_vectors, schedule);
  CUDA_CHECK_LAUNCH();
}

// Whether a compact launch runs the compact cache for these rows: where
// the kernel can hold it (tau = 1, the mixture, G') and it was measured
// faster, without the GEMMs' statistics (with them, its copies in flight
// slowed the seed's row kernel by 9 %: docs/perf-log.md, "Row-v6's
// compact cache").
bool compact_cache_applies(const Params &p, Divergence divergence, bool grad) {
  return divergence == Divergence::mixture && grad && p.unit_temperature && p.student_stats == nullptr;
}

// kFmaLanes applies to the compact cache's instantiation only (the
// studies').
template <int kCluster, int kThreads, bool kCompact, Divergence kDivergence, int kFmaLanes = 0>
void launch_for(const Params &p, std::int64_t rows, bool grad, cudaStream_t stream) {
  if constexpr (kCompact && kDivergence == Divergence::mixture) {
    if (compact_cache_applies(p, kDivergence, grad)) {
      launch<kDivergence, true, true, false, true, kCluster, kThreads, kFmaLanes>(p, rows, kCompact, stream);
      return;
    }
  }
  if (p.student_stats != nullptr) {
    grad ? launch<kDivergence, true, true, true, false, kCluster, kThreads>(p, rows, kCompact, stream)
         : launch<kDivergence, false, true, true, false, kCluster, kThreads>(p, rows, kCompact, stream);
  } else if (p.unit_temperature) {
    grad ? launch<kDivergence, true, true, false, false, kCluster, kThreads>(p, rows, kCompact, stream)
         : launch<kDivergence, false, true, false, false, kCluster, kThreads>(p, rows, kCompact, stream);
  } else {
    grad ? launch<kDivergence, true, false, false, false, kCluster, kThreads>(p, rows, kCompact, stream)
         : launch<kDivergence, false, false, false, false, kCluster, kThreads>(p, rows, kCompact, stream);
  }
}

// Calls f with the divergence that beta selects (divergence_for), as a
// std::integral_constant for the kernels' template argument.
template <class F> void with_divergence(double beta, F &&f) {
  switch (divergence_for(beta)) {
  case Divergence::mixture: f(std::integral_constant<Divergence, Divergence::mixture>{}); break;
  case Divergence::forward_kl: f(std::integral_constant<Divergence, Divergence::forward_kl>{}); break;
  case Divergence::reverse_kl: f(std::integral_constant<Divergence, Divergence::reverse_kl>{}); break;
  }
}

// kCompact: the compact cache where it applies (tau = 1, the mixture, G'),
// and no cache where a pass reads each vector once.
template <int kCluster, int kThreads, bool kCompact = false, int kFmaLanes = 0>
void launch_v6(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  const Params p = detail::row_loss_params(args);
  const bool grad = args.write_grad;
  with_divergence(args.beta, [&](auto divergence) {
    constexpr Divergence kDivergence = decltype(divergence)::value;
    launch_for<kCluster, kThreads, kCompact, kDivergence, kDivergence == Divergence::mixture ? kFmaLanes : 0>(
        p, args.rows, grad, stream);
  });
}

template <int kCluster, int kThreads, bool kCompact> RowLossV6Layout layout_of(std::int64_t vocab) {
  // The seed's instantiation (mixture, G', tau = 1, the GEMMs'
  // statistics; the compact cache's runs without them); the others have
  // the same threads and shared memory.
  const auto *key = reinterpret_cast<const void *>(
      &row_loss_v6_kernel<Divergence::mixture, true, true, !kCompact, kCompact, kCluster, kThreads>);
  const auto g = geometry<kCluster, kThreads, kCompact>(key, vocab);
  detail::raise_smem_limit(key, g.smem);
  RowLossV6Layout out;
  out.ctas_per_row = kCluster;
  out.threads = kThreads;
  out.slice_vectors = g.slice / kVector;
  out.cached_vectors = g.cached_vectors;
  out.shared_bytes = g.smem;
  out.resident_clusters = detail::resident_clusters(key, g.smem, kCluster, kThreads);
  return out;
}

} // namespace

void launch_row_loss_v6_pairs(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<2, 1024>(args, stream);
}
void launch_row_loss_v6_quads(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<4, 512>(args, stream);
}
void launch_row_loss_v6_compact_pairs(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<2, 1024, true>(args, stream);
}
void launch_row_loss_v6_compact_singles(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<1, 1024, true>(args, stream);
}
void launch_row_loss_v6_compact_singles_512(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<1, 512, true>(args, stream);
}
void launch_row_loss_v6_compact_pairs_512(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<2, 512, true>(args, stream);
}
namespace {
// A pass that reads each vector once (a forward pass with the GEMMs'
// statistics) on singles of kThreads threads, 1024 / kThreads rows an SM;
// every other pass as launch_row_loss runs it, so that the studies can
// check and time it on every configuration.
template <int kThreads> void launch_read_once_or_shipped(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  const Params p = detail::row_loss_params(args);
  if (!reads_once(args.write_grad, p.student_stats != nullptr)) {
    launch_row_loss(args, stream);
    return;
  }
  with_divergence(args.beta, [&](auto divergence) {
    launch<decltype(divergence)::value, false, true, true, false, 1, kThreads>(p, args.rows, true, stream);
  });
}
} // namespace

void launch_row_loss_v6_read_once_256(const RowLossArgs &args, cudaStream_t stream) {
  launch_read_once_or_shipped<256>(args, stream);
}
void launch_row_loss_v6_read_once_128(const RowLossArgs &args, cudaStream_t stream) {
  launch_read_once_or_shipped<128>(args, stream);
}
void launch_row_loss_v6_compact_singles_fma2(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<1, 1024, true, 2>(args, stream);
}
void launch_row_loss_v6_compact_singles_fma3(const RowLossArgs &args, cudaStream_t stream) {
  launch_v6<1, 1024, true, 3>(args, stream);
}

// A row to one CTA (singles) where the rows fill every SM once at least
// and the vectors its later sweeps would read again from global memory
// stay in L2: then a row needs no cluster exchange and twice as many are in
// flight. Measured on an H100 (docs/perf-log.md, "Row-v6 singles"): the
// row kernel 16-19 % faster than pairs where the whole row stays in shared
// memory (the GPT-2 case; T 777, V 32001, tau 0.7) and 10 % where 4822 of
// its 6283 vectors do (T 8192, V 50257, tau 0.7: 6.2 MB re-read by the
// rows in flight). Where the re-read vectors of 132 rows would fill L2
// (the seed's 47 MB, H = 1024's 37 MB) pairs keep them at 13 MB; a
// forward pass with the GEMMs' statistics re-reads nothing, and singles
// took its row kernel from 2.03 to 1.81 ms at the seed (docs/perf-log.md,
// "Singles in the forward pass"). Below one row an SM (T = 7, T = 128 on
// 132 SMs) a row over two SMs finishes sooner.
bool row_loss_v6_singles_pay(const RowLossArgs &args) {
  const Params p = detail::row_loss_params(args);
  const bool compact = compact_cache_applies(p, divergence_for(args.beta), args.write_grad);
  const RowLossV6Layout l =
      compact ? layout_of<1, 1024, true>(args.vocab) : layout_of<1, 1024, false>(args.vocab);
  if (args.rows < l.resident_clusters) return false;
  // A pass that reads each vector once keeps none in shared memory and
  // reads none again.
  if (reads_once(args.write_grad, p.student_stats != nullptr)) return true;
  const std::size_t reread_bytes = static_cast<std::size_t>(l.resident_clusters) *
                                   static_cast<std::size_t>(l.slice_vectors - l.cached_vectors) * 2 *
                                   sizeof(uint4);
  return reread_bytes <= memory_limits().l2 / 4;
}

// Rows an SM for a pass that reads each vector once (a forward pass with
// the GEMMs' statistics: no shared-memory cache, so a CTA's share of it
// costs nothing): the most of 8, 4 and 2 (singles of 128, 256 and 512
// threads, 1024 threads an SM) whose resident CTAs the rows fill once at
// least; 0 elsewhere. Each SM then runs that many rows whose starts (the
// GEMMs' statistics combined), sweeps and reductions need not line up,
// where 1024-thread singles run one row's chain at a time. Measured
// (docs/perf-log.md, "Two rows in flight an SM" and "The forward singles
// of 512 threads on the H100…"), the row kernel alone on one chunk, H100:
// the seed's 2816 rows 0.570 ms (1024 threads), 0.532 (512), 0.535 (256),
// 0.524 (128); a GPT-2 chunk's 1000 rows 0.112, 0.093, 0.087, 0.086. Where
// a row keeps vectors in shared memory the smaller share costs what the
// rows in flight gain (the GPT-2 case with G', H200: 0.175 ms with 512
// threads against 0.170), so those rows keep 1024-thread CTAs.
int row_loss_v6_read_once_rows_per_sm(const RowLossArgs &args) {
  const Params p = detail::row_loss_params(args);
  if (!reads_once(args.write_grad, p.student_stats != nullptr)) return 0;
  // Whether the rows fill every resident CTA of kThreads threads.
  const auto fills = [&]<int kThreads>(std::integral_constant<int, kThreads>) {
    const auto *key = reinterpret_cast<const void *>(
        &row_loss_v6_kernel<Divergence::mixture, false, true, true, false, 1, kThreads>);
    return args.rows >= detail::resident_clusters(key, 0, 1, kThreads);
  };
  if (fills(std::integral_constant<int, 128>{})) return 8;
  if (fills(std::integral_constant<int, 256>{})) return 4;
  if (fills(std::integral_constant<int, 512>{})) return 2;
  return 0;
}

void set_row_loss_v6_limits(RowLossV6Limits limits) {
  g_cache_limit.store(limits.cache_vectors);
  g_cluster_limit.store(limits.clusters);
  g_stagger_ns.store(limits.stagger_ns);
  g_staged_wait.store(limits.staged_wait);
}

RowLossV6Layout row_loss_v6_layout(std::int64_t vocab, int ctas_per_row, bool compact) {
  if (ctas_per_row == 2) return compact ? layout_of<2, 1024, true>(vocab) : layout_of<2, 1024, false>(vocab);
  if (ctas_per_row == 1 && compact) return layout_of<1, 1024, true>(vocab);
  if (compact)
    throw std::invalid_argument("row_loss_v6_layout: the compact cache runs in clusters of 1 or 2 CTAs");
  if (ctas_per_row == 4) return layout_of<4, 512, false>(vocab);
  throw std::invalid_argument("row_loss_v6_layout: 2 or 4 CTAs a row (1 with the compact cache)");
}

} // namespace kibench::gpu::fused
