// Row kernel, version 5 (dev study): the row work as independent streaming
// units, with L2 as the row's buffer instead of a cluster's shared memory.
//
// Why. row-v3 keeps each row in the shared memory of a cluster of 8 CTAs
// (770 KB a row), so only 30 rows are in flight, each behind a chain of
// cluster reductions; Nsight Compute put half its issue slots idle and a
// quarter of its warp samples at barriers, and in a pass (after the GEMMs,
// at the clock they leave) it runs at about twice its HBM and SFU floors
// (docs/perf-log.md, "Where a pass's time goes"). Here a row is cut into
// slices of 4096 columns and each (row, slice) passes through three units
// of work, each one CTA of 256 threads with no shared row state:
//   A  the slice's softmax partials (max, Σ 2^(x − max)) of a = z_s log2 e
//      and b = z_t log2 e, from the logits, or from the logit GEMMs'
//      per-256-column statistics where they exist (16 pairs a slice);
//   B  once all of the row's A units are done: the row's log-sum-exps
//      from the partials, then the slice's KL sums Σ q log2(q/m) and
//      Σ p log2(p/m);
//   C  once all of the row's B units are done: the row's KL sums, then
//      G' over the slice (written over z_s), and for the slice-0 unit the
//      row's loss term.
// A persistent grid (only resident CTAs) takes units from one atomic
// counter in an order that runs A of row block k, B of block k − 1 and C
// of block k − 2 together (blocks of 16 rows): a unit waits only on units
// handed out before it, which resident CTAs are running, so the waits
// always end; and the three blocks in flight (25 MB at V = 128256) stay in
// L2, so HBM sees each logit read once and G' written once (6 bytes a
// logit), the B and C sweeps reading L2. Every combine runs in a fixed
// order (slices in order, warps in order, xor butterflies), so every run
// gets the same bits. The price: the SFU work of the C sweep is recomputed
// (6 ex2/lg2 a logit with the GEMMs' statistics, 8 without, against
// row-v3's 4 and 6), and a global workspace of partials and counters.
//
// Every divergence and temperature row-v3 takes, with its math: the
// mixture, and the forward and reverse KL at beta = 0 and 1 (whose B units
// compute the one KL sum the loss needs), sigma from a third softmax
// partial where tau != 1; the GEMMs' statistics at tau = 1.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>

#include "dev/fused/row_kernels.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/row_loss_device.cuh"

namespace kibench::gpu::fused {

namespace {

namespace d = detail;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kVectorsPerThread = 2;                        // 16-byte vectors a thread and tensor
constexpr int kSliceVectors = kThreads * kVectorsPerThread; // 512
constexpr int kSlice = kSliceVectors * d::kVector;          // 4096 columns a unit
constexpr int kStatsTile = 256;                             // the logit GEMM's statistics tile
constexpr int kTilesPerSlice = kSlice / kStatsTile;         // 16
constexpr int kBlockRows = 16;                              // rows a pipeline block
constexpr int kSlots = 3;                                   // C, B, A units in each step
static_assert(kTilesPerSlice <= kThreads);

struct Work {
  d::Params p;
  int rows;
  int slices; // units a row and phase: ceil(V / kSlice)
  int blocks; // ceil(rows / kBlockRows)
  bool grad;
  float4 *softmax_parts; // [rows][slices]: (max a, Σ 2^(a − max a), max b, Σ 2^(b − max b))
  float2 *raw_parts;     // [rows][slices]: the same of z_s log2 e, for sigma at tau != 1
  float2 *kl_parts;      // [rows][slices]: the divergence's two KL sums (kl_sums below)
  unsigned *counters;    // [0] the next unit; [1 + r] A units done of row r; [1 + rows + r] B units
};

// (max, sum) pairs: a ⊕ b, in that order (deterministic for given inputs).
__device__ __forceinline__ float2 combine(float2 a, float2 b) {
  const float big = fmaxf(a.x, b.x);
  if (big == -INFINITY) return make_float2(-INFINITY, 0.0f);
  return make_float2(big, a.y * ex2(a.x - big) + b.y * ex2(b.x - big));
}

// Every lane of the warp returns the warp's combination (xor butterflies).
__device__ __forceinline__ float2 warp_combine(float2 v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float2 other =
        make_float2(__shfl_xor_sync(0xffffffffu, v.x, offset), __shfl_xor_sync(0xffffffffu, v.y, offset));
    // The lower lane's value first: both partners compute the same bits.
    v = (threadIdx.x & offset) ? combine(other, v) : combine(v, other);
  }
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

struct Shared {
  int unit;
  float4 warp[kWarps]; // per-warp partials of a block reduction
  float row[5];        // lse_a, lse_b, kl0, kl1, lse_raw of the unit's row
};

// Two (max, sum) pairs over the CTA; thread 0 gets the result.
__device__ float4 block_combine(float2 a, float2 b, Shared &sh) {
  a = warp_combine(a);
  b = warp_combine(b);
  if ((threadIdx.x & 31) == 0) sh.warp[threadIdx.x >> 5] = make_float4(a.x, a.y, b.x, b.y);
  __syncthreads();
  float4 out = make_float4(0, 0, 0, 0);
  if (threadIdx.x == 0) {
    float2 ra = make_float2(sh.warp[0].x, sh.warp[0].y), rb = make_float2(sh.warp[0].z, sh.warp[0].w);
    for (int w = 1; w < kWarps; ++w) {
      ra = combine(ra, make_float2(sh.warp[w].x, sh.warp[w].y));
      rb = combine(rb, make_float2(sh.warp[w].z, sh.warp[w].w));
    }
    out = make_float4(ra.x, ra.y, rb.x, rb.y);
  }
  __syncthreads(); // sh.warp is free again
  return out;
}

// Three sums over the CTA; thread 0 gets the result.
__device__ float3 block_sum(float x, float y, float z, Shared &sh) {
  x = warp_sum(x);
  y = warp_sum(y);
  z = warp_sum(z);
  if ((threadIdx.x & 31) == 0) sh.warp[threadIdx.x >> 5] = make_float4(x, y, z, 0.0f);
  __syncthreads();
  float3 out = make_float3(0, 0, 0);
  if (threadIdx.x == 0) {
    out = make_float3(sh.warp[0].x, sh.warp[0].y, sh.warp[0].z);
    for (int w = 1; w < kWarps; ++w) {
      out.x += sh.warp[w].x;
      out.y += sh.warp[w].y;
      out.z += sh.warp[w].z;
    }
  }
  __syncthreads();
  return out;
}

__device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Thread 0 waits until *counter reaches `target`; then the CTA goes on.
__device__ void wait_for(const unsigned *counter, unsigned target) {
  if (threadIdx.x == 0) {
    while (load_acquire(counter) < target) __nanosleep(100);
  }
  __syncthreads();
}

// Thread 0: the unit's partial is written; count it for the row.
__device__ __forceinline__ void publish(unsigned *counter) {
  __threadfence();
  atomicAdd(counter, 1u);
}

// Warp 0 combines the row's softmax partials (slices in order within each
// lane, lanes by butterfly) into sh.row[0..1] = (lse_a, lse_b); with
// `kl`, also the row's KL sums into sh.row[2..3]. The CTA then reads them.
template <bool kUnitTemperature> __device__ void load_row(const Work &w, int row, bool kl, Shared &sh) {
  if (threadIdx.x < 32) {
    float2 a = make_float2(-INFINITY, 0.0f), b = a, raw = a;
    float kl0 = 0.0f, kl1 = 0.0f;
    for (int s = threadIdx.x; s < w.slices; s += 32) {
      const std::int64_t at = static_cast<std::int64_t>(row) * w.slices + s;
      const float4 part = __ldcg(&w.softmax_parts[at]);
      a = combine(a, make_float2(part.x, part.y));
      b = combine(b, make_float2(part.z, part.w));
      if constexpr (!kUnitTemperature) raw = combine(raw, __ldcg(&w.raw_parts[at]));
      if (kl) {
        const float2 k = __ldcg(&w.kl_parts[at]);
        kl0 += k.x;
        kl1 += k.y;
      }
    }
    a = warp_combine(a);
    b = warp_combine(b);
    if constexpr (!kUnitTemperature) raw = warp_combine(raw);
    kl0 = warp_sum(kl0);
    kl1 = warp_sum(kl1);
    if (threadIdx.x == 0) {
      sh.row[0] = a.x + lg2(a.y);
      sh.row[1] = b.x + lg2(b.y);
      sh.row[2] = kl0;
      sh.row[3] = kl1;
      sh.row[4] = kUnitTemperature ? sh.row[0] : raw.x + lg2(raw.y);
    }
  }
  __syncthreads();
}

// The unit's 16-byte vectors of a row: v = threadIdx.x + k kThreads.
struct SliceView {
  int begin;   // first column
  int count;   // columns inside the vocabulary
  int vectors; // 16-byte vectors covering them
  __device__ int lanes(int v) const { return min(d::kVector, count - v * d::kVector); }
};

__device__ __forceinline__ SliceView slice_view(const Work &w, int slice) {
  SliceView s;
  s.begin = slice * kSlice;
  s.count = min(kSlice, w.p.vocab - s.begin);
  s.vectors = (s.count + d::kVector - 1) / d::kVector;
  return s;
}

__device__ __forceinline__ const uint4 *row_vectors(const __nv_bfloat16 *base, const Work &w, int row,
                                                    const SliceView &s) {
  return reinterpret_cast<const uint4 *>(base + static_cast<std::int64_t>(row) * w.p.ld + s.begin);
}

// The thread's 16-byte vectors of the slice of z_s and z_t, both loads
// issued before either is used; through L2 only (another SM's units may
// have read the row into it, and G' overwrites z_s later).
__device__ __forceinline__ void load_slice(const Work &w, int row, const SliceView &s,
                                           uint4 (&vs)[kVectorsPerThread], uint4 (&vt)[kVectorsPerThread]) {
  const uint4 *zs = row_vectors(w.p.student, w, row, s), *zt = row_vectors(w.p.teacher, w, row, s);
#pragma unroll
  for (int k = 0; k < kVectorsPerThread; ++k) {
    const int v = threadIdx.x + k * kThreads;
    if (v < s.vectors) {
      vs[k] = __ldcg(zs + v);
      vt[k] = __ldcg(zt + v);
    }
  }
}

template <bool kUnitTemperature> __device__ void unit_softmax(const Work &w, int row, int slice, Shared &sh) {
  const SliceView s = slice_view(w, slice);
  float2 a = make_float2(-INFINITY, 0.0f), b = a, raw = a;
  if (w.p.student_stats != nullptr) { // tau = 1 (row_loss_params)
    const int tile = s.begin / kStatsTile + static_cast<int>(threadIdx.x);
    if (threadIdx.x < kTilesPerSlice && tile < w.p.stats_tiles) {
      a = w.p.student_stats[static_cast<std::int64_t>(row) * w.p.stats_ld + tile];
      b = w.p.teacher_stats[static_cast<std::int64_t>(row) * w.p.stats_ld + tile];
    }
  } else {
    uint4 vs[kVectorsPerThread], vt[kVectorsPerThread];
    load_slice(w, row, s, vs, vt);
    // x = z scale (a, b); the maxima first, then one ex2 a value. The raw
    // softmax of z (sigma, where tau != 1) takes its own maximum.
    float xs[kVectorsPerThread][d::kVector], xt[kVectorsPerThread][d::kVector];
    float ms = -INFINITY, mt = -INFINITY, mr = -INFINITY;
#pragma unroll
    for (int k = 0; k < kVectorsPerThread; ++k) {
      const int v = threadIdx.x + k * kThreads;
      if (v < s.vectors) {
        d::unpack(vs[k], xs[k]);
        d::unpack(vt[k], xt[k]);
        const int lanes = s.lanes(v);
#pragma unroll
        for (int j = 0; j < d::kVector; ++j) {
          if constexpr (!kUnitTemperature) mr = j < lanes ? fmaxf(mr, xs[k][j] * kLog2e) : mr;
          xs[k][j] = j < lanes ? xs[k][j] * w.p.scale : -INFINITY;
          xt[k][j] = j < lanes ? xt[k][j] * w.p.scale : -INFINITY;
          ms = fmaxf(ms, xs[k][j]);
          mt = fmaxf(mt, xt[k][j]);
        }
      }
    }
    float ss = 0.0f, st = 0.0f, sr = 0.0f;
#pragma unroll
    for (int k = 0; k < kVectorsPerThread; ++k) {
      if (threadIdx.x + k * kThreads < s.vectors) {
#pragma unroll
        for (int j = 0; j < d::kVector; ++j) {
          ss += ex2(xs[k][j] - ms); // ex2(-inf) = 0 for the lanes past V
          st += ex2(xt[k][j] - mt);
          // z log2 e = x / scale · log2 e; the lanes past V hold -inf and
          // give 2^(±inf): skipped by the same test as the maxima.
          if constexpr (!kUnitTemperature)
            if (xs[k][j] != -INFINITY) sr += ex2(fmaf(xs[k][j] / w.p.scale, kLog2e, -mr));
        }
      }
    }
    a = make_float2(ms, ms == -INFINITY ? 0.0f : ss);
    b = make_float2(mt, mt == -INFINITY ? 0.0f : st);
    raw = make_float2(mr, mr == -INFINITY ? 0.0f : sr);
  }
  const float4 part = block_combine(a, b, sh);
  float2 raw_part = make_float2(0, 0);
  if constexpr (!kUnitTemperature) {
    const float4 r = block_combine(raw, raw, sh);
    raw_part = make_float2(r.x, r.y);
  }
  if (threadIdx.x == 0) {
    const std::int64_t at = static_cast<std::int64_t>(row) * w.slices + slice;
    w.softmax_parts[at] = part;
    if constexpr (!kUnitTemperature) w.raw_parts[at] = raw_part;
    publish(&w.counters[1 + row]);
  }
}

// One logit pair's terms: log_q = a − lse_a, log_p = b − lse_b in base 2,
// q, p, and for the mixture log2 m with m = (1 − beta) q + beta p
// (+ FLT_MIN, so that log2 m stays finite where both underflow).
struct Terms {
  float log_q, log_p, q, p, log_m;
};

template <Divergence kDivergence>
__device__ __forceinline__ Terms terms(const d::Params &p, float zs, float zt, float lse_a, float lse_b) {
  Terms x;
  x.log_q = fmaf(zs, p.scale, -lse_a);
  x.log_p = fmaf(zt, p.scale, -lse_b);
  x.q = ex2(x.log_q);
  x.p = 0.0f;
  x.log_m = 0.0f;
  if constexpr (kDivergence == Divergence::mixture) {
    x.p = ex2(x.log_p);
    x.log_m = lg2(fmaf(p.one_minus_beta, x.q, fmaf(p.beta, x.p, FLT_MIN)));
  } else if constexpr (kDivergence == Divergence::forward_kl) {
    x.p = ex2(x.log_p);
  }
  return x;
}

// The divergence's KL sums in base 2 over the slice: (Σ q log2(q/m),
// Σ p log2(p/m)) for the mixture, (Σ q log2(q/p), 0) for the reverse KL,
// (0, Σ p log2(p/q)) for the forward KL, as row-v3's kl[0], kl[1].
template <Divergence kDivergence, bool kUnitTemperature>
__device__ void unit_kl(const Work &w, int row, int slice, Shared &sh) {
  wait_for(&w.counters[1 + row], static_cast<unsigned>(w.slices));
  load_row<kUnitTemperature>(w, row, false, sh);
  const float lse_a = sh.row[0], lse_b = sh.row[1];
  const SliceView s = slice_view(w, slice);
  uint4 vs[kVectorsPerThread], vt[kVectorsPerThread];
  load_slice(w, row, s, vs, vt);
  float kl0 = 0.0f, kl1 = 0.0f;
#pragma unroll
  for (int k = 0; k < kVectorsPerThread; ++k) {
    const int v = threadIdx.x + k * kThreads;
    if (v < s.vectors) {
      float xs[d::kVector], xt[d::kVector];
      d::unpack(vs[k], xs);
      d::unpack(vt[k], xt);
      const int lanes = s.lanes(v);
#pragma unroll
      for (int j = 0; j < d::kVector; ++j) {
        if (j < lanes) {
          const Terms t = terms<kDivergence>(w.p, xs[j], xt[j], lse_a, lse_b);
          if constexpr (kDivergence == Divergence::mixture) {
            kl0 = fmaf(t.q, t.log_q - t.log_m, kl0);
            kl1 = fmaf(t.p, t.log_p - t.log_m, kl1);
          } else if constexpr (kDivergence == Divergence::reverse_kl) {
            kl0 = fmaf(t.q, t.log_q - t.log_p, kl0);
          } else {
            kl1 = fmaf(t.p, t.log_p - t.log_q, kl1);
          }
        }
      }
    }
  }
  const float3 sums = block_sum(kl0, kl1, 0.0f, sh);
  if (threadIdx.x == 0) {
    w.kl_parts[static_cast<std::int64_t>(row) * w.slices + slice] = make_float2(sums.x, sums.y);
    publish(&w.counters[1 + w.rows + row]);
  }
}

// G' = w_h sigma + w_s dJ/dz over the slice, as row-v3's gradient sweep,
// and for slice 0 the row's loss term.
template <Divergence kDivergence, bool kUnitTemperature>
__device__ void unit_gradient(const Work &w, int row, int slice, bool ignored, Shared &sh) {
  const SliceView s = slice_view(w, slice);
  auto *out = reinterpret_cast<uint4 *>(w.p.student + static_cast<std::int64_t>(row) * w.p.ld + s.begin);
  if (ignored) { // zeros, and a zero loss term
    if (w.grad)
      for (int v = threadIdx.x; v < s.vectors; v += kThreads) out[v] = make_uint4(0, 0, 0, 0);
    if (slice == 0 && threadIdx.x == 0) w.p.row_loss[row] = 0.0f;
    return;
  }
  if (!w.grad && slice != 0) return;
  wait_for(&w.counters[1 + w.rows + row], static_cast<unsigned>(w.slices));
  load_row<kUnitTemperature>(w, row, true, sh);
  const float lse_a = sh.row[0], lse_b = sh.row[1], kl0 = sh.row[2], kl1 = sh.row[3], lse_raw = sh.row[4];
  if (w.grad) {
    uint4 vs[kVectorsPerThread], vt[kVectorsPerThread];
    load_slice(w, row, s, vs, vt);
#pragma unroll
    for (int k = 0; k < kVectorsPerThread; ++k) {
      const int v = threadIdx.x + k * kThreads;
      if (v < s.vectors) {
        float xs[d::kVector], xt[d::kVector], g[d::kVector];
        d::unpack(vs[k], xs);
        d::unpack(vt[k], xt);
        const int lanes = s.lanes(v);
#pragma unroll
        for (int j = 0; j < d::kVector; ++j) {
          g[j] = 0.0f; // the row padding past V stays zero
          if (j < lanes) {
            const Terms t = terms<kDivergence>(w.p, xs[j], xt[j], lse_a, lse_b);
            const float sigma = kUnitTemperature ? t.q : ex2(fmaf(xs[j], kLog2e, -lse_raw));
            float dj;
            if constexpr (kDivergence == Divergence::mixture)
              dj = w.p.grad_scale * t.q * ((t.log_q - t.log_m) - kl0); // (1-beta)/tau q (log(q/m) - KL(q||m))
            else if constexpr (kDivergence == Divergence::reverse_kl)
              dj = w.p.grad_scale * t.q * ((t.log_q - t.log_p) - kl0); // q (log(q/p) - KL(q||p)) / tau
            else
              dj = w.p.grad_scale * (t.q - t.p); // (q - p) / tau
            g[j] = fmaf(w.p.weight_hard, sigma, w.p.weight_soft * dj);
          }
        }
        out[v] = d::pack(g);
      }
    }
  }
  if (slice == 0) {
    // The target logit x_s · W_s[y] (+ b_s[y]) in fp32, as row-v3 takes it.
    const std::int64_t y = w.p.target[row];
    const __nv_bfloat16 *x = w.p.student_input + static_cast<std::int64_t>(row) * w.p.student_hidden;
    const __nv_bfloat16 *wy = w.p.student_weight + y * w.p.student_hidden;
    float dot = 0.0f;
    for (int k = threadIdx.x; k < w.p.student_hidden; k += kThreads)
      dot = fmaf(__bfloat162float(x[k]), __bfloat162float(wy[k]), dot);
    const float3 sum = block_sum(dot, 0.0f, 0.0f, sh);
    if (threadIdx.x == 0) {
      const float target_logit =
          sum.x + (w.p.student_bias != nullptr ? __bfloat162float(w.p.student_bias[y]) : 0.0f);
      const float kl[2] = {kl0, kl1};
      w.p.row_loss[row] = d::row_loss_value<kDivergence>(w.p, kl, lse_raw, target_logit);
    }
  }
}

template <Divergence kDivergence, bool kUnitTemperature>
__global__ void __launch_bounds__(kThreads, 3) row_loss_v5_kernel(Work w) {
  __shared__ Shared sh;
  const int per_group = kBlockRows * w.slices;
  const int total = (w.blocks + 2) * kSlots * per_group;
  for (;;) {
    if (threadIdx.x == 0) sh.unit = static_cast<int>(atomicAdd(&w.counters[0], 1u));
    __syncthreads();
    const int unit = sh.unit;
    __syncthreads(); // sh.unit is read before thread 0 takes the next
    if (unit >= total) return;
    const int step = unit / (kSlots * per_group), in_step = unit % (kSlots * per_group);
    const int slot = in_step / per_group, in_group = in_step % per_group;
    const int block = step - (kSlots - 1 - slot); // slot 0: C of step − 2, 1: B of step − 1, 2: A of step
    const int row = block * kBlockRows + in_group / w.slices, slice = in_group % w.slices;
    if (block < 0 || block >= w.blocks || row >= w.rows) continue;
    const bool ignored = w.p.target[row] == w.p.ignore_index;
    if (slot == 2) {
      if (!ignored) unit_softmax<kUnitTemperature>(w, row, slice, sh);
    } else if (slot == 1) {
      if (!ignored) unit_kl<kDivergence, kUnitTemperature>(w, row, slice, sh);
    } else {
      unit_gradient<kDivergence, kUnitTemperature>(w, row, slice, ignored, sh);
    }
  }
}

// The partials and counters, kept from launch to launch (a study's, never
// freed); grown as chunks need.
struct Scratch {
  std::mutex mutex;
  void *data = nullptr;
  std::size_t bytes = 0;
};

void *scratch(std::size_t bytes) {
  static Scratch s;
  std::lock_guard lock(s.mutex);
  if (bytes > s.bytes) {
    if (s.data != nullptr) CUDA_CHECK(cudaFree(s.data));
    s.data = nullptr;
    CUDA_CHECK(cudaMalloc(&s.data, bytes));
    s.bytes = bytes;
  }
  return s.data;
}

using Kernel = void (*)(Work);

Kernel kernel_for(Divergence divergence, bool unit_temperature) {
  switch (divergence) {
  case Divergence::mixture:
    return unit_temperature ? row_loss_v5_kernel<Divergence::mixture, true>
                            : row_loss_v5_kernel<Divergence::mixture, false>;
  case Divergence::reverse_kl:
    return unit_temperature ? row_loss_v5_kernel<Divergence::reverse_kl, true>
                            : row_loss_v5_kernel<Divergence::reverse_kl, false>;
  case Divergence::forward_kl:
    return unit_temperature ? row_loss_v5_kernel<Divergence::forward_kl, true>
                            : row_loss_v5_kernel<Divergence::forward_kl, false>;
  }
  throw std::invalid_argument("row-v5: unknown divergence");
}

// CTAs of `kernel` resident at once on the GPU (the persistent grid).
int resident_ctas(Kernel kernel) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  if (per_sm < 1) throw std::runtime_error("row-v5: no CTA fits on an SM");
  return sms * per_sm;
}

} // namespace

void launch_row_loss_v5(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  const d::Params p = d::row_loss_params(args);
  const Kernel kernel = kernel_for(divergence_for(args.beta), p.unit_temperature);
  Work w{};
  w.p = p;
  w.rows = static_cast<int>(args.rows);
  w.slices = (p.vocab + kSlice - 1) / kSlice;
  w.blocks = (w.rows + kBlockRows - 1) / kBlockRows;
  w.grad = args.write_grad;
  const std::size_t parts = static_cast<std::size_t>(w.rows) * static_cast<std::size_t>(w.slices);
  const std::size_t counter_bytes = (1 + 2 * static_cast<std::size_t>(w.rows)) * sizeof(unsigned);
  const std::size_t softmax_offset = (counter_bytes + 255) / 256 * 256;
  const std::size_t raw_offset = softmax_offset + parts * sizeof(float4);
  const std::size_t kl_offset = raw_offset + parts * sizeof(float2);
  auto *base = static_cast<char *>(scratch(kl_offset + parts * sizeof(float2)));
  w.counters = reinterpret_cast<unsigned *>(base);
  w.softmax_parts = reinterpret_cast<float4 *>(base + softmax_offset);
  w.raw_parts = reinterpret_cast<float2 *>(base + raw_offset);
  w.kl_parts = reinterpret_cast<float2 *>(base + kl_offset);
  CUDA_CHECK(cudaMemsetAsync(w.counters, 0, counter_bytes, stream));
  const int total_units = (w.blocks + 2) * kSlots * kBlockRows * w.slices;
  static std::mutex mutex;
  static std::map<Kernel, int> resident;
  int ctas = 0;
  {
    std::lock_guard lock(mutex);
    auto [it, fresh] = resident.try_emplace(kernel, 0);
    if (fresh) it->second = resident_ctas(kernel);
    ctas = it->second;
  }
  const int grid = std::min(ctas, total_units);
  kernel<<<grid, kThreads, 0, stream>>>(w);
  CUDA_CHECK(cudaGetLastError());
}

} // namespace kibench::gpu::fused
