// Device pieces the row-kernel versions share (row_loss.cu has the math):
// the launch parameters, the shared-memory slice of a row, cluster-wide
// reductions, and the two sweeps that follow the row statistics: the KL
// sweep and the gradient sweep. For nvcc only.
#pragma once

#include <cstdint>

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/fast_math.cuh"
#include "kernels/lm_head/fused/row_loss.hpp"

namespace kibench::gpu::fused::detail {

namespace cg = cooperative_groups;

constexpr int kClusterSize = 8; // CTAs per row (the portable maximum)
constexpr int kThreads = 512;   // per CTA; two CTAs per SM
constexpr int kWarps = kThreads / 32;
constexpr int kVector = 8; // bf16 elements per 16-byte vector
constexpr float kLn2 = 0.6931471805599453f;

struct Params {
  __nv_bfloat16 *student; // z_s, becomes G'
  const __nv_bfloat16 *teacher;
  std::int64_t ld;
  int vocab;
  int slice; // elements per CTA, a multiple of kVector
  const std::int64_t *target;
  const __nv_bfloat16 *student_input;
  const __nv_bfloat16 *student_weight;
  const __nv_bfloat16 *student_bias;
  int student_hidden;
  float *row_loss;
  float scale; // log2(e) / tau: z -> a in base-2 units
  float beta;
  float one_minus_beta;
  float grad_scale; // dJ/dz prefactor: (1 - beta) ln2 / tau, ln2 / tau or 1 / tau
  float weight_hard;
  float weight_soft;
  std::int64_t ignore_index;
  bool unit_temperature; // sigma = q, and one sum fewer
  // The logit GEMMs' row statistics (abt_gemm.hpp), or null: per row r and
  // 256-column tile j, stats[r * stats_ld + j] = (max a, Σ 2^(a − max a))
  // over the tile, a = z scale (student) or z_t scale (teacher). Version 3
  // at tau = 1 only: the kernel then combines them instead of its own
  // statistics sweep and cluster reduction.
  const float2 *student_stats;
  const float2 *teacher_stats;
  std::int64_t stats_ld;
  int stats_tiles;
};

// Elements per CTA: V / ctas (v3's 8 by default) rounded up to whole
// 16-byte vectors.
constexpr int slice_for(std::int64_t vocab, int ctas = kClusterSize) {
  const std::int64_t per_cta = (vocab + ctas - 1) / ctas;
  return static_cast<int>((per_cta + kVector - 1) / kVector * kVector);
}

// A slice keeps z_s in bf16 and b = z_t log2(e) / tau in fp32.
constexpr std::size_t dynamic_smem_bytes(int slice) {
  return static_cast<std::size_t>(slice) * (sizeof(__nv_bfloat16) + sizeof(float));
}

__device__ __forceinline__ void unpack(const uint4 &v, float (&out)[kVector]) {
  const auto *pairs = reinterpret_cast<const __nv_bfloat162 *>(&v);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

__device__ __forceinline__ uint4 pack(const float (&in)[kVector]) {
  uint4 v;
  auto *pairs = reinterpret_cast<__nv_bfloat162 *>(&v);
#pragma unroll
  for (int i = 0; i < kVector / 2; ++i) pairs[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
  return v;
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Thread 0 leaves acc[] in shared `result`; after a CTA barrier every
// thread reads it into v[] (the end of a reduction whose result thread 0
// holds).
template <int N, int M>
__device__ __forceinline__ void broadcast_from_thread0(const float (&acc)[N], float (&v)[N], float (&result)[M]) {
  static_assert(N <= M);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) result[i] = acc[i];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = result[i];
}

// The per-CTA state the cluster reductions exchange: kStages reductions per
// row of up to kValues values each.
template <int kStages, int kValues> struct Exchange {
  static constexpr int values = kValues;
  float warp[kWarps][kValues];
  float slot[kStages][kValues]; // read by the other CTAs of the cluster
};

// Reduces v[] over the whole cluster; every thread of every CTA returns the
// same values. The order is fixed (butterfly in the warp, warps in order,
// ranks in order), so results are deterministic. Each stage has its own
// slot row: a slot is rewritten only in a later row, after a cluster
// barrier that every reader of its earlier value has passed.
template <int N, class ExchangeT, class Op>
__device__ void cluster_reduce(float (&v)[N], int stage, ExchangeT &ex, cg::cluster_group &cluster, Op op) {
  static_assert(N <= ExchangeT::values);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < N; ++i) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
      v[i] = op(v[i], __shfl_xor_sync(0xffffffffu, v[i], offset));
  }
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) ex.warp[warp][i] = v[i];
  }
  __syncthreads();
  if (threadIdx.x < N) {
    float acc = ex.warp[0][threadIdx.x];
    for (int w = 1; w < kWarps; ++w) acc = op(acc, ex.warp[w][threadIdx.x]);
    ex.slot[stage][threadIdx.x] = acc;
  }
  cluster.sync(); // also orders ex.warp's reuse by the next reduction
#pragma unroll
  for (int i = 0; i < N; ++i) {
    float acc = *cluster.map_shared_rank(&ex.slot[stage][i], 0);
#pragma unroll
    for (int r = 1; r < kClusterSize; ++r) acc = op(acc, *cluster.map_shared_rank(&ex.slot[stage][i], r));
    v[i] = acc;
  }
}

// Shared memory of one CTA: its slice of z_s as loaded (bf16), and of
// b = z_t log2(e) / tau in fp32, split in low and high halves of each
// 8-element vector so that 16-byte accesses of a warp are contiguous (no
// bank conflicts). The mixture overwrites b with log2(q/m). (Row kernel v3
// with tau = 1 keeps z_t itself as b and scales it where it reads it.)
struct Slice {
  uint4 *student;
  float4 *low;
  float4 *high;

  __device__ static Slice at(uint4 *smem, int slice) {
    auto *low = reinterpret_cast<float4 *>(smem + slice / kVector);
    return Slice{smem, low, low + slice / kVector};
  }
  __device__ void store(int v, const uint4 &z, const float (&b)[kVector]) const {
    student[v] = z;
    store_b(v, b);
  }
  __device__ void store_b(int v, const float (&b)[kVector]) const {
    low[v] = make_float4(b[0], b[1], b[2], b[3]);
    high[v] = make_float4(b[4], b[5], b[6], b[7]);
  }
  __device__ void load(int v, float (&z)[kVector], float (&b)[kVector]) const {
    unpack(student[v], z);
    const float4 lo = low[v], hi = high[v];
    b[0] = lo.x, b[1] = lo.y, b[2] = lo.z, b[3] = lo.w, b[4] = hi.x, b[5] = hi.y, b[6] = hi.z, b[7] = hi.w;
  }
};

// A CTA's part of one row.
struct RowPart {
  int begin;   // first vocabulary index of the slice
  int count;   // elements of the slice inside the vocabulary
  int vectors; // 16-byte vectors covering them
  int full;    // of which whole: vectors - 1 if count is no multiple of 8
  // Elements of vector v inside the vocabulary (only a row's very last
  // vector can be partial; the rest of it is row padding).
  __device__ int lanes(int v) const { return min(kVector, count - v * kVector); }
};

__device__ inline RowPart row_part(const Params &p, int rank) {
  RowPart part;
  part.begin = rank * p.slice;
  part.count = max(0, min(p.slice, p.vocab - part.begin));
  part.vectors = (part.count + kVector - 1) / kVector;
  part.full = part.count / kVector;
  return part;
}

// Prefetches `bytes` from `pointer` on into L2 (a bulk prefetch: no
// registers, no completion to wait for).
__device__ __forceinline__ void prefetch_l2(const void *pointer, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(pointer), "r"(bytes) : "memory");
}

// A CTA's part of the logit rows of `row`: z_s (overwritten by G') and z_t,
// as 16-byte vectors.
struct RowPointers {
  uint4 *student;
  const uint4 *teacher;
};

__device__ __forceinline__ RowPointers row_pointers(const Params &p, int row, const RowPart &part) {
  return {reinterpret_cast<uint4 *>(p.student + row * p.ld + part.begin),
          reinterpret_cast<const uint4 *>(p.teacher + row * p.ld + part.begin)};
}

// The first `bytes` of this CTA's slice of the row `ahead` rows on, into L2.
__device__ __forceinline__ void prefetch_row(const Params &p, int row, int ahead, const RowPart &part,
                                             unsigned bytes) {
  const std::int64_t next = static_cast<std::int64_t>(ahead) * p.ld;
  prefetch_l2(p.student + row * p.ld + next + part.begin, bytes);
  prefetch_l2(p.teacher + row * p.ld + next + part.begin, bytes);
}

// For a row whose target is ignored (or outside the vocabulary): its G'
// part zeroed (kGrad) and, by rank 0, a zero loss; false for any other row.
// Every CTA of the cluster skips the same rows, with no barrier.
template <bool kGrad, int kThreadsOfCta>
__device__ __forceinline__ bool skip_ignored_row(const Params &p, int row, std::int64_t y, int rank, int tid,
                                                 const RowPart &part, uint4 *out_row) {
  if (!(y == p.ignore_index || y < 0 || y >= p.vocab)) return false;
  if constexpr (kGrad) {
    for (int v = tid; v < part.vectors; v += kThreadsOfCta) out_row[v] = make_uint4(0, 0, 0, 0);
  }
  if (rank == 0 && tid == 0) p.row_loss[row] = 0.0f;
  return true;
}

// This thread's share of the target logit x_s,i . W_s[y_i] in fp32 (the
// cluster's kStride threads take h = first, first + kStride, ...): the
// first operands are loaded as the row starts, so that their latency
// passes under the row's loads, and the rest when the product is taken.
template <int kStride> struct TargetLogitShare {
  const __nv_bfloat16 *x, *w;
  int first;
  float x0 = 0.0f, w0 = 0.0f;

  __device__ __forceinline__ TargetLogitShare(const Params &p, int row, std::int64_t y, int first_h)
      : x(p.student_input + static_cast<std::int64_t>(row) * p.student_hidden),
        w(p.student_weight + y * p.student_hidden), first(first_h) {
    if (first < p.student_hidden) {
      x0 = __bfloat162float(x[first]);
      w0 = __bfloat162float(w[first]);
    }
  }
  __device__ __forceinline__ float dot(const Params &p) const {
    float sum = x0 * w0;
    for (int h = first + kStride; h < p.student_hidden; h += kStride)
      sum = fmaf(__bfloat162float(x[h]), __bfloat162float(w[h]), sum);
    return sum;
  }
};

// log2-sum-exp2 of a = z log2(e)/tau, of b, and of the raw z log2(e).
struct RowStats {
  float lse_a, lse_b, lse_raw;
};

// Whether the divergence has a sweep of its own before the gradient sweep
// (the forward KL's gradient needs no KL value, so its sum rides along).
template <Divergence kDivergence, bool kGrad>
inline constexpr bool kSeparateKlSweep = kDivergence != Divergence::forward_kl || !kGrad;

// The divergence's KL sums in base 2: kl[0] = sum q log2(q/m) (mixture) or
// sum q log2(q/p) (reverse), kl[1] = sum p log2(p/m) (mixture) or
// sum p log2(p/q) (forward). The mixture keeps log2(q/m) in place of b for
// the gradient sweep.
template <Divergence kDivergence, bool kGrad, int N>
__device__ void kl_sweep(const Params &p, const Slice &s, const RowPart &part, const RowStats &st,
                         float (&kl)[N]) {
  static_assert(N >= 2);
  for (int v = threadIdx.x; v < part.vectors; v += kThreads) {
    const int lanes = part.lanes(v);
    float z[kVector], b[kVector];
    s.load(v, z, b);
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      const float log_q = fmaf(z[j], p.scale, -st.lse_a), log_p = b[j] - st.lse_b;
      if constexpr (kDivergence == Divergence::mixture) {
        float log_q_over_m = 0.0f;
        if (j < lanes) {
          const float q = ex2(log_q), pr = ex2(log_p);
          const float m = fmaf(p.one_minus_beta, q, p.beta * pr);
          if (m > 0.0f) { // else q = p = 0 underflowed: both terms vanish
            const float log_m = lg2(m);
            log_q_over_m = log_q - log_m;
            kl[0] = fmaf(q, log_q_over_m, kl[0]);
            kl[1] = fmaf(pr, log_p - log_m, kl[1]);
          }
        }
        b[j] = log_q_over_m;
      } else if constexpr (kDivergence == Divergence::reverse_kl) {
        if (j < lanes) kl[0] = fmaf(ex2(log_q), log_q - log_p, kl[0]);
      } else { // forward KL, forward pass only
        if (j < lanes) kl[1] = fmaf(ex2(log_p), log_p - log_q, kl[1]);
      }
    }
    if constexpr (kDivergence == Divergence::mixture && kGrad) s.store_b(v, b);
  }
}

// The gradient row G' = w_h sigma + w_s dJ/dz, written over z_s (each CTA
// read its part of z_s into shared memory first, and no other CTA touches
// it). kl_row is KL(q||m) or KL(q||p) in base 2; the forward KL's
// KL(p||q) accumulates into kl[1] here.
template <Divergence kDivergence, int N>
__device__ void gradient_sweep(const Params &p, const Slice &s, const RowPart &part, const RowStats &st,
                               float kl_row, float (&kl)[N], uint4 *out_row) {
  static_assert(N >= 2);
  for (int v = threadIdx.x; v < part.vectors; v += kThreads) {
    const int lanes = part.lanes(v);
    float z[kVector], b[kVector], g[kVector];
    s.load(v, z, b);
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      g[j] = 0.0f; // the row padding past V stays zero
      if (j < lanes) {
        const float log_q = fmaf(z[j], p.scale, -st.lse_a);
        const float q = ex2(log_q);
        const float sigma = p.unit_temperature ? q : ex2(fmaf(z[j], kLog2e, -st.lse_raw));
        float dj;
        if constexpr (kDivergence == Divergence::mixture) {
          // (1-beta)/tau q (log(q/m) - KL(q||m)), in base 2 times ln 2
          dj = p.grad_scale * q * (b[j] - kl_row);
        } else if constexpr (kDivergence == Divergence::reverse_kl) {
          // q (log(q/p) - KL(q||p)) / tau
          dj = p.grad_scale * q * ((log_q - (b[j] - st.lse_b)) - kl_row);
        } else {
          // (q - p) / tau
          const float log_p = b[j] - st.lse_b;
          const float pr = ex2(log_p);
          kl[1] = fmaf(pr, log_p - log_q, kl[1]);
          dj = p.grad_scale * (q - pr);
        }
        g[j] = fmaf(p.weight_hard, sigma, p.weight_soft * dj);
      }
    }
    out_row[v] = pack(g);
  }
}

// w_h CE_i + w_s J_i from the reduced row statistics.
template <Divergence kDivergence>
__device__ float row_loss_value(const Params &p, const float *kl, float lse_raw, float target_logit) {
  float divergence;
  if constexpr (kDivergence == Divergence::mixture)
    divergence = kLn2 * (p.beta * kl[1] + p.one_minus_beta * kl[0]);
  else if constexpr (kDivergence == Divergence::reverse_kl)
    divergence = kLn2 * kl[0];
  else
    divergence = kLn2 * kl[1];
  const float cross_entropy = kLn2 * lse_raw - target_logit;
  return p.weight_hard * cross_entropy + p.weight_soft * divergence;
}

// The kernel's parameters from the host's arguments (row_loss.cu); throws
// std::invalid_argument on a bad configuration. Every version of the row
// kernel (row-v6 here, the superseded ones in dev/fused/) starts
// from these.
Params row_loss_params(const RowLossArgs &args);

// Clusters of `cluster` CTAs of `threads` (by default v3's 8 of kThreads)
// that fit on the GPU at once for `kernel` with `smem` bytes of dynamic
// shared memory (asked once per kernel and size).
int resident_clusters(const void *kernel, std::size_t smem, int cluster = kClusterSize,
                      int threads = kThreads);

// Raises a kernel's dynamic shared-memory limit to `bytes` if it is lower
// (a per-kernel attribute; it only ever grows).
void raise_smem_limit(const void *kernel, std::size_t bytes);

} // namespace kibench::gpu::fused::detail
