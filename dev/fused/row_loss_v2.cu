// Row kernel, version 2: resident clusters, and the maxima folded into the
// sums.
//
// Version 1 ran at ~1.2 TB/s on the H200, a third of HBM bandwidth, with
// the SFU far from busy; each row paid a cluster launch, a load round trip
// and four cluster barriers, which two CTAs per SM could not hide. Here:
//  - the grid holds only as many clusters as fit on the GPU at once, and
//    each loops over rows (r, r + clusters, ...): no launch or scheduling
//    gap between rows, and the two CTAs of an SM drift apart, so one's
//    loads overlap the other's sweeps;
//  - each thread keeps a running (max, sum) per softmax while it loads, one
//    rescale per 16-byte vector whose max is new (online softmax), so the
//    separate max sweep and its cluster barrier are gone: two barriers per
//    row instead of four;
//  - the target logit's operands are fetched before the row's loads and
//    used after them, off the critical path;
//  - after each barrier one warp gathers the 8 CTAs' partials and combines
//    them in rank order, instead of every thread reading all 8 over DSMEM.
// Measured: 14% faster than version 1 (1.21 ms a 2048-row chunk with G').
// Nsight Compute shows what is left is instruction issue (~80 warp
// instructions per logit at 8 warps per scheduler), not bytes or the SFU;
// docs/perf.md lists what would cut it.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "dev/fused/row_kernels.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/row_loss_device.cuh"

namespace kibench::gpu::fused::detail {

namespace {

constexpr int kBatch = 2;  // 16-byte vectors per thread and tensor in flight during the load
constexpr int kValues = 8; // values per reduction: 3 (max, sum) pairs and the target logit
constexpr int kStages = 2; // reductions per row: the softmax statistics, then the KL sums
struct ExchangeV2 {
  float warp[kWarps][kValues];
  float slot[kStages][kValues]; // read by the other CTAs of the cluster
  float result[kValues];        // the cluster's combined values, for every thread of this CTA
};

// (m, s) represents s 2^m; combining keeps the larger exponent. Symmetric
// in its operands, so butterfly partners compute identical values.
__device__ __forceinline__ void combine(float &m, float &s, float m2, float s2) {
  const float big = fmaxf(m, m2);
  if (big == -INFINITY) return; // both empty
  s = s * ex2(m - big) + s2 * ex2(m2 - big);
  m = big;
}

// Adds 2^(x_j scale) over a vector's lanes to the running (m, s).
__device__ __forceinline__ void accumulate(float &m, float &s, const float (&z)[kVector], float scale,
                                           int lanes) {
  float top = -INFINITY;
#pragma unroll
  for (int j = 0; j < kVector; ++j)
    if (j < lanes) top = fmaxf(top, z[j] * scale);
  if (top > m) {
    s *= ex2(m - top);
    m = top;
  }
#pragma unroll
  for (int j = 0; j < kVector; ++j)
    if (j < lanes) s += ex2(fmaf(z[j], scale, -m));
}

// Values 0-2: maxima, 3-5: sums, 6: the target logit's partial dot product.
struct CombineStats {
  __device__ void operator()(float (&a)[kValues], const float (&b)[kValues]) const {
#pragma unroll
    for (int i = 0; i < 3; ++i) combine(a[i], a[3 + i], b[i], b[3 + i]);
    a[6] += b[6];
  }
};

struct CombineSums {
  __device__ void operator()(float (&a)[kValues], const float (&b)[kValues]) const {
#pragma unroll
    for (int i = 0; i < kValues; ++i) a[i] += b[i];
  }
};

// Reduces v[] over the cluster in a fixed order (butterfly in the warp,
// warps in order, ranks in order); every thread returns the same values.
template <class Combine>
__device__ void cluster_combine(float (&v)[kValues], int stage, ExchangeV2 &ex, cg::cluster_group &cluster,
                                Combine combine_into) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    float other[kValues];
#pragma unroll
    for (int i = 0; i < kValues; ++i) other[i] = __shfl_xor_sync(0xffffffffu, v[i], offset);
    combine_into(v, other);
  }
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < kValues; ++i) ex.warp[warp][i] = v[i];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float acc[kValues];
#pragma unroll
    for (int i = 0; i < kValues; ++i) acc[i] = ex.warp[0][i];
    for (int w = 1; w < kWarps; ++w) {
      float other[kValues];
#pragma unroll
      for (int i = 0; i < kValues; ++i) other[i] = ex.warp[w][i];
      combine_into(acc, other);
    }
#pragma unroll
    for (int i = 0; i < kValues; ++i) ex.slot[stage][i] = acc[i];
  }
  cluster.sync(); // also orders ex.warp's and ex.result's reuse
  if (warp == 0) {
    // Lane r fetches rank r's partials; lane 0 combines them in rank order.
    float mine[kValues] = {};
    if (lane < kClusterSize) {
      const float *remote = cluster.map_shared_rank(&ex.slot[stage][0], lane);
#pragma unroll
      for (int i = 0; i < kValues; ++i) mine[i] = remote[i];
    }
    float acc[kValues];
#pragma unroll
    for (int i = 0; i < kValues; ++i) acc[i] = __shfl_sync(0xffffffffu, mine[i], 0);
#pragma unroll
    for (int r = 1; r < kClusterSize; ++r) {
      float other[kValues];
#pragma unroll
      for (int i = 0; i < kValues; ++i) other[i] = __shfl_sync(0xffffffffu, mine[i], r);
      combine_into(acc, other);
    }
    if (lane == 0) {
#pragma unroll
      for (int i = 0; i < kValues; ++i) ex.result[i] = acc[i];
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kValues; ++i) v[i] = ex.result[i];
}

template <Divergence kDivergence, bool kGrad>
__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kThreads, 2)
    row_loss_v2_kernel(const Params p, int rows) {
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  __shared__ ExchangeV2 ex;
  extern __shared__ uint4 dynamic_smem[];
  const RowPart part = row_part(p, rank);
  const Slice s = Slice::at(dynamic_smem, p.slice);
  const int clusters = static_cast<int>(gridDim.x) / kClusterSize;

  // Every thread reads and writes only the slice vectors v = threadIdx.x +
  // k * kThreads, in every sweep of every row, so the slice needs no barrier
  // between one row's gradient sweep and the next row's loads.
  for (int row = static_cast<int>(blockIdx.x) / kClusterSize; row < rows; row += clusters) {
    auto *out_row = reinterpret_cast<uint4 *>(p.student + row * p.ld + part.begin);
    const std::int64_t y = p.target[row];
    if (y == p.ignore_index || y < 0 || y >= p.vocab) {
      // Every CTA of the cluster skips the same rows, with no barrier.
      if constexpr (kGrad) {
        for (int v = threadIdx.x; v < part.vectors; v += kThreads) out_row[v] = make_uint4(0, 0, 0, 0);
      }
      if (rank == 0 && threadIdx.x == 0) p.row_loss[row] = 0.0f;
      continue;
    }

    // The target logit's first operands, in flight during the row's loads.
    const __nv_bfloat16 *x = p.student_input + static_cast<std::int64_t>(row) * p.student_hidden;
    const __nv_bfloat16 *w = p.student_weight + y * p.student_hidden;
    const int h0 = rank * kThreads + static_cast<int>(threadIdx.x);
    float x0 = 0.0f, w0 = 0.0f;
    if (h0 < p.student_hidden) {
      x0 = __bfloat162float(x[h0]);
      w0 = __bfloat162float(w[h0]);
    }

    // Load sweep: the slice into shared memory, with running (max, sum) of
    // 2^a, 2^b and (tau != 1) 2^(z log2 e).
    float stats[kValues] = {-INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    {
      const auto *student_in = reinterpret_cast<const uint4 *>(out_row);
      const auto *teacher_in = reinterpret_cast<const uint4 *>(p.teacher + row * p.ld + part.begin);
      for (int base = threadIdx.x; base < part.vectors; base += kBatch * kThreads) {
        uint4 zs[kBatch] = {}, zt[kBatch] = {};
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int v = base + u * kThreads;
          if (v < part.vectors) {
            zs[u] = __ldcs(student_in + v); // read once: do not keep in L2
            zt[u] = __ldcs(teacher_in + v);
          }
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const int v = base + u * kThreads;
          if (v >= part.vectors) continue;
          const int lanes = part.lanes(v);
          float z[kVector], b[kVector];
          unpack(zs[u], z);
          unpack(zt[u], b);
          accumulate(stats[0], stats[3], z, p.scale, lanes);
          accumulate(stats[1], stats[4], b, p.scale, lanes);
          if (!p.unit_temperature) accumulate(stats[2], stats[5], z, kLog2e, lanes);
#pragma unroll
          for (int j = 0; j < kVector; ++j) b[j] *= p.scale;
          s.store(v, zs[u], b);
        }
      }
    }
    stats[6] = x0 * w0;
    for (int h = h0 + kClusterSize * kThreads; h < p.student_hidden; h += kClusterSize * kThreads)
      stats[6] = fmaf(__bfloat162float(x[h]), __bfloat162float(w[h]), stats[6]);
    cluster_combine(stats, 0, ex, cluster, CombineStats{});
    RowStats st;
    st.lse_a = stats[0] + log2f(stats[3]); // log2 sum 2^a
    st.lse_b = stats[1] + log2f(stats[4]);
    st.lse_raw = p.unit_temperature ? st.lse_a : stats[2] + log2f(stats[5]);
    const float target_logit =
        stats[6] + (p.student_bias != nullptr ? __bfloat162float(p.student_bias[y]) : 0.0f);

    // The KL sweep and the gradient sweep, as in version 1; one more
    // barrier for the KL sums (the forward KL's ride along the gradient).
    float kl[kValues] = {};
    if constexpr (kSeparateKlSweep<kDivergence, kGrad>) {
      kl_sweep<kDivergence, kGrad>(p, s, part, st, kl);
      cluster_combine(kl, 1, ex, cluster, CombineSums{});
    }
    if constexpr (kGrad) {
      gradient_sweep<kDivergence>(p, s, part, st, kl[0], kl, out_row);
      if constexpr (kDivergence == Divergence::forward_kl) cluster_combine(kl, 1, ex, cluster, CombineSums{});
    }
    if (rank == 0 && threadIdx.x == 0)
      p.row_loss[row] = row_loss_value<kDivergence>(p, kl, st.lse_raw, target_logit);
  }
  // No CTA may leave while another still reads its exchange slots.
  cluster.sync();
}

template <Divergence kDivergence, bool kGrad>
void launch(const Params &p, std::int64_t rows, cudaStream_t stream) {
  auto *kernel = &row_loss_v2_kernel<kDivergence, kGrad>;
  const std::size_t smem = dynamic_smem_bytes(p.slice);
  const auto *key = reinterpret_cast<const void *>(kernel);
  raise_smem_limit(key, smem);
  const auto clusters = static_cast<unsigned>(std::min<std::int64_t>(rows, resident_clusters(key, smem)));
  kernel<<<dim3(kClusterSize * clusters), kThreads, smem, stream>>>(p, static_cast<int>(rows));
  CUDA_CHECK_LAUNCH();
}

} // namespace

void launch_v2(const Params &p, std::int64_t rows, Divergence divergence, bool grad, cudaStream_t stream) {
  switch (divergence) {
  case Divergence::mixture:
    grad ? launch<Divergence::mixture, true>(p, rows, stream)
         : launch<Divergence::mixture, false>(p, rows, stream);
    break;
  case Divergence::forward_kl:
    grad ? launch<Divergence::forward_kl, true>(p, rows, stream)
         : launch<Divergence::forward_kl, false>(p, rows, stream);
    break;
  case Divergence::reverse_kl:
    grad ? launch<Divergence::reverse_kl, true>(p, rows, stream)
         : launch<Divergence::reverse_kl, false>(p, rows, stream);
    break;
  }
}

} // namespace kibench::gpu::fused::detail

namespace kibench::gpu::fused {

void launch_row_loss_v2(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  if (args.student_stats != nullptr)
    throw std::invalid_argument(
        "row kernel v2: the GEMMs' row statistics are the shipped kernel's (v3) alone");
  const detail::Params p = detail::row_loss_params(args);
  detail::launch_v2(p, args.rows, divergence_for(args.beta), args.write_grad, stream);
}

} // namespace kibench::gpu::fused
