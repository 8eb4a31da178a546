// Row kernel, version 1: one cluster per row, one launch per chunk.
//
// The grid is (8, rows): cluster r loads row r's slices, then runs four
// sweeps, each closed by a cluster-wide reduction: the maxima (during the
// load), the sums of exponentials (with the exact target logit), the KL
// sums, and the gradient row. Kept for comparison: on the H200 it runs a
// 2048-row chunk in ~1.3 ms, a third of HBM bandwidth (docs/perf.md).
#include <cmath>
#include <stdexcept>

#include "dev/fused/row_kernels.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/fused/row_loss_device.cuh"

namespace kibench::gpu::fused::detail {

namespace {

constexpr int kBatch = 4; // 16-byte vectors per thread and tensor in flight during the load
using ExchangeV1 = Exchange<4, 4>;

template <Divergence kDivergence, bool kGrad>
__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kThreads, 2)
    row_loss_v1_kernel(const Params p) {
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = blockIdx.y;
  __shared__ ExchangeV1 ex;
  extern __shared__ uint4 dynamic_smem[];

  const RowPart part = row_part(p, rank);
  auto *out_row = reinterpret_cast<uint4 *>(p.student + row * p.ld + part.begin);

  const std::int64_t y = p.target[row];
  if (y == p.ignore_index || y < 0 || y >= p.vocab) {
    // The whole cluster shares the row, so all its CTAs leave here together.
    if constexpr (kGrad) {
      for (int v = threadIdx.x; v < part.vectors; v += kThreads) out_row[v] = make_uint4(0, 0, 0, 0);
    }
    if (rank == 0 && threadIdx.x == 0) p.row_loss[row] = 0.0f;
    return;
  }
  const Slice s = Slice::at(dynamic_smem, p.slice);

  // Sweep 0: load the slice once, keep it in shared memory, track maxima.
  float maxima[3] = {-INFINITY, -INFINITY, -INFINITY}; // max z, max -z, max b
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
#pragma unroll
        for (int j = 0; j < kVector; ++j) {
          b[j] *= p.scale;
          if (j < lanes) {
            maxima[0] = fmaxf(maxima[0], z[j]);
            maxima[1] = fmaxf(maxima[1], -z[j]);
            maxima[2] = fmaxf(maxima[2], b[j]);
          }
        }
        s.store(v, zs[u], b);
      }
    }
  }
  cluster_reduce(maxima, 0, ex, cluster, Max{});
  // Maxima of a = z log2(e)/tau (a negative tau flips max and min), of the
  // raw z in base 2, and of b.
  const float max_a = p.scale > 0.0f ? maxima[0] * p.scale : -maxima[1] * p.scale;
  const float max_raw = maxima[0] * kLog2e;
  const float max_b = maxima[2];

  // Sweep 1: sums of exponentials, and this CTA's share of the exact target
  // logit x_s,i . W_s[y].
  float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f}; // sum 2^(a - max), 2^(b - max), 2^(z log2e - max), z[y]
  for (int v = threadIdx.x; v < part.vectors; v += kThreads) {
    const int lanes = part.lanes(v);
    float z[kVector], b[kVector];
    s.load(v, z, b);
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      if (j < lanes) {
        sums[0] += ex2(fmaf(z[j], p.scale, -max_a));
        sums[1] += ex2(b[j] - max_b);
        if (!p.unit_temperature) sums[2] += ex2(fmaf(z[j], kLog2e, -max_raw));
      }
    }
  }
  {
    const __nv_bfloat16 *x = p.student_input + row * p.student_hidden;
    const __nv_bfloat16 *w = p.student_weight + y * p.student_hidden;
    for (int h = rank * kThreads + static_cast<int>(threadIdx.x); h < p.student_hidden;
         h += kClusterSize * kThreads)
      sums[3] = fmaf(__bfloat162float(x[h]), __bfloat162float(w[h]), sums[3]);
  }
  cluster_reduce(sums, 1, ex, cluster, Sum{});
  RowStats st;
  st.lse_a = max_a + log2f(sums[0]); // log2 sum 2^a
  st.lse_b = max_b + log2f(sums[1]);
  st.lse_raw = p.unit_temperature ? st.lse_a : max_raw + log2f(sums[2]);
  const float target_logit =
      sums[3] + (p.student_bias != nullptr ? __bfloat162float(p.student_bias[y]) : 0.0f);

  // Sweep 2: the KL sums; sweep 3: the gradient row.
  float kl[2] = {0.0f, 0.0f};
  if constexpr (kSeparateKlSweep<kDivergence, kGrad>) {
    kl_sweep<kDivergence, kGrad>(p, s, part, st, kl);
    cluster_reduce(kl, 2, ex, cluster, Sum{});
  }
  if constexpr (kGrad) {
    gradient_sweep<kDivergence>(p, s, part, st, kl[0], kl, out_row);
    if constexpr (kDivergence == Divergence::forward_kl) cluster_reduce(kl, 3, ex, cluster, Sum{});
  }
  if (rank == 0 && threadIdx.x == 0)
    p.row_loss[row] = row_loss_value<kDivergence>(p, kl, st.lse_raw, target_logit);
  // No CTA may leave while another still reads its exchange slots.
  cluster.sync();
}

template <Divergence kDivergence, bool kGrad>
void launch(const Params &p, std::int64_t rows, cudaStream_t stream) {
  auto *kernel = &row_loss_v1_kernel<kDivergence, kGrad>;
  const std::size_t smem = dynamic_smem_bytes(p.slice);
  raise_smem_limit(reinterpret_cast<const void *>(kernel), smem);
  kernel<<<dim3(kClusterSize, static_cast<unsigned>(rows)), kThreads, smem, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace

void launch_v1(const Params &p, std::int64_t rows, Divergence divergence, bool grad, cudaStream_t stream) {
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

void launch_row_loss_v1(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  if (args.student_stats != nullptr)
    throw std::invalid_argument(
        "row kernel v1: the GEMMs' row statistics are the shipped kernel's (v3) alone");
  const detail::Params p = detail::row_loss_params(args);
  detail::launch_v1(p, args.rows, divergence_for(args.beta), args.write_grad, stream);
}

} // namespace kibench::gpu::fused
