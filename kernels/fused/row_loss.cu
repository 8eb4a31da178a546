// The fused loss-and-gradient row kernel (docs/loss-math.md has the math).
//
// For token row i with student logits z = z_s,i and teacher logits z_t,i
// (bf16, as the chunk's GEMMs wrote them), and a = z / tau, b = z_t / tau:
//   q = softmax(a), p = softmax(b), sigma = softmax(z)     (sigma = q at tau 1)
//   CE_i = logsumexp(z) - z[y_i]
//   J_i  = beta KL(p||m) + (1 - beta) KL(q||m),  m = (1 - beta) q + beta p
//          (KL(p||q) at beta 0, KL(q||p) at beta 1)
//   G'_i = w_h sigma + w_s dJ/dz    (N times the gradient, less its one-hot
//                                    term -w_h onehot(y_i): one_hot.hpp)
// and writes w_h CE_i + w_s J_i to row_loss[i] and G'_i over z_s,i.
//
// What is fused, and why. A row is 128256 logits of each model, 513 KB in
// bf16; the softmaxes need its maxima and sums first, the mixture's KL(q||m)
// (a row constant of the gradient) needs the normalized q and p, and only
// then can G' be written: three dependent sweeps. Reading the row from HBM
// three times (or hoping 132 rows in flight, 67 MB, stay in the 50 MB L2)
// would triple the bytes of a kernel that should run at HBM bandwidth. So
// one cluster of 8 CTAs owns a row: each CTA loads its eighth once (16-byte
// streaming loads) into shared memory, bf16 z_s and fp32 b (96 KB at the
// seed's vocabulary, two CTAs per SM so one's loads overlap the other's
// arithmetic), every later sweep reads shared memory, and the row statistics
// are combined across the cluster through distributed shared memory, in
// rank order, so every CTA (and every run) gets bit-identical values.
//
// The kernel is bounded by the special-function unit (16 ex2/lg2 per SM per
// clock) about as much as by memory, so the sweeps count them: all
// exponentials are ex2 of values pre-scaled by log2(e) (one FFMA + one MUFU
// each); the mixture's log2(q/m) is computed once, in the KL sweep, and kept
// in place of b for the gradient sweep (6 MUFU per element at tau = 1, where
// sigma = q, instead of 8). Sums are fp32 (per thread, then fixed-order
// trees); a row's terms are O(1), so this is far inside the 1e-5 loss
// budget.
//
// The target logit z[y_i] of the cross-entropy is not read from the bf16
// logits: the cluster recomputes x_s,i . W_s[y_i] (+ b_s[y_i]) in fp32 (8 KB
// per row). bf16 rounding of that single logit (~4e-4 absolute) would
// otherwise be the largest error in the loss of a short sequence; the
// log-sum-exp averages the rounding of all V logits away.
#include "fused/row_loss.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <cooperative_groups.h>
#include <cuda_bf16.h>

#include "cuda/cuda_check.hpp"

namespace kibench::gpu::fused {

namespace cg = cooperative_groups;

namespace {

constexpr int kClusterSize = 8; // CTAs per row (the portable maximum)
constexpr int kThreads = 512;   // per CTA; two CTAs per SM
constexpr int kWarps = kThreads / 32;
constexpr int kBatch = 4;     // 16-byte vectors per thread and tensor in flight during the load
constexpr int kVector = 8;    // bf16 elements per 16-byte vector
constexpr int kStages = 4;    // cluster reductions per row, each with its own exchange slots
constexpr int kMaxValues = 4; // values per cluster reduction
constexpr float kLog2e = 1.4426950408889634f;
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
};

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
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

// The per-CTA state the cluster reductions exchange.
struct Exchange {
  float warp[kWarps][kMaxValues];
  float slot[kStages][kMaxValues]; // read by the other CTAs of the cluster
};

// Reduces v[] over the whole cluster; every thread of every CTA returns the
// same values. Order is fixed (butterfly in the warp, warps in order, ranks
// in order), so results are deterministic. Each stage uses its own slot row,
// so a slot is never rewritten while a slower CTA may still read it.
template <int N, class Op>
__device__ void cluster_reduce(float (&v)[N], int stage, Exchange &ex, cg::cluster_group &cluster, Op op) {
  static_assert(N <= kMaxValues);
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
  cluster.sync(); // also orders ex.warp's reuse by the next stage
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
// bank conflicts). The mixture overwrites b with log2(q/m).
struct Slice {
  uint4 *student;
  float4 *low;
  float4 *high;
};

template <Divergence kDivergence, bool kGrad>
__global__ void __cluster_dims__(kClusterSize, 1, 1) __launch_bounds__(kThreads, 2)
    row_loss_kernel(const Params p) {
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = blockIdx.y;
  __shared__ Exchange ex;
  extern __shared__ uint4 dynamic_smem[];

  const int begin = rank * p.slice;
  const int count = max(0, min(p.slice, p.vocab - begin));
  const int vectors = (count + kVector - 1) / kVector;
  auto *out_row = reinterpret_cast<uint4 *>(p.student + row * p.ld + begin);

  const std::int64_t y = p.target[row];
  if (y == p.ignore_index || y < 0 || y >= p.vocab) {
    // The whole cluster shares the row, so all its CTAs leave here together.
    if constexpr (kGrad) {
      for (int v = threadIdx.x; v < vectors; v += kThreads) out_row[v] = make_uint4(0, 0, 0, 0);
    }
    if (rank == 0 && threadIdx.x == 0) p.row_loss[row] = 0.0f;
    return;
  }

  const Slice s{dynamic_smem, reinterpret_cast<float4 *>(dynamic_smem + p.slice / kVector),
                reinterpret_cast<float4 *>(dynamic_smem + p.slice / kVector) + p.slice / kVector};
  // Elements of vector v that lie inside the vocabulary (only the very last
  // vector of a row can be partial; the rest of it is row padding).
  auto lanes_of = [count](int v) { return min(kVector, count - v * kVector); };

  // Sweep 0: load the slice once, keep it in shared memory, track maxima.
  float maxima[3] = {-INFINITY, -INFINITY, -INFINITY}; // max z, max -z, max b
  {
    const auto *student_in = reinterpret_cast<const uint4 *>(out_row);
    const auto *teacher_in = reinterpret_cast<const uint4 *>(p.teacher + row * p.ld + begin);
    for (int base = threadIdx.x; base < vectors; base += kBatch * kThreads) {
      uint4 zs[kBatch] = {}, zt[kBatch] = {};
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int v = base + u * kThreads;
        if (v < vectors) {
          zs[u] = __ldcs(student_in + v); // read once: do not keep in L2
          zt[u] = __ldcs(teacher_in + v);
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int v = base + u * kThreads;
        if (v >= vectors) continue;
        const int lanes = lanes_of(v);
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
        s.student[v] = zs[u];
        s.low[v] = make_float4(b[0], b[1], b[2], b[3]);
        s.high[v] = make_float4(b[4], b[5], b[6], b[7]);
      }
    }
  }
  cluster_reduce(maxima, 0, ex, cluster, Max{});
  // Maxima of a = z log2(e)/tau (a negative tau flips max and min), of the
  // raw z in base 2, and of b.
  const float max_a = p.scale > 0.0f ? maxima[0] * p.scale : -maxima[1] * p.scale;
  const float max_raw = maxima[0] * kLog2e;
  const float max_b = maxima[2];

  // Reads vector v of the slice: z (raw) and the fp32 companion.
  auto load = [&](int v, float(&z)[kVector], float(&b)[kVector]) {
    unpack(s.student[v], z);
    const float4 lo = s.low[v], hi = s.high[v];
    b[0] = lo.x, b[1] = lo.y, b[2] = lo.z, b[3] = lo.w, b[4] = hi.x, b[5] = hi.y, b[6] = hi.z, b[7] = hi.w;
  };

  // Sweep 1: sums of exponentials, and this CTA's share of the exact target
  // logit x_s,i . W_s[y].
  float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f}; // sum 2^(a - max), 2^(b - max), 2^(z log2e - max), z[y]
  for (int v = threadIdx.x; v < vectors; v += kThreads) {
    const int lanes = lanes_of(v);
    float z[kVector], b[kVector];
    load(v, z, b);
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
  const float lse_a = max_a + log2f(sums[0]); // log2 sum 2^a
  const float lse_b = max_b + log2f(sums[1]);
  const float lse_raw = p.unit_temperature ? lse_a : max_raw + log2f(sums[2]);
  const float target_logit =
      sums[3] + (p.student_bias != nullptr ? __bfloat162float(p.student_bias[y]) : 0.0f);

  // Sweep 2: the divergence's KL sums (base 2). The mixture keeps
  // log2(q/m) for the gradient sweep in place of b.
  float kl[2] = {0.0f, 0.0f};
  constexpr bool kSeparateKlSweep = kDivergence != Divergence::forward_kl || !kGrad;
  if constexpr (kSeparateKlSweep) {
    for (int v = threadIdx.x; v < vectors; v += kThreads) {
      const int lanes = lanes_of(v);
      float z[kVector], b[kVector];
      load(v, z, b);
#pragma unroll
      for (int j = 0; j < kVector; ++j) {
        const float log_q = fmaf(z[j], p.scale, -lse_a), log_p = b[j] - lse_b;
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
      if constexpr (kDivergence == Divergence::mixture && kGrad) {
        s.low[v] = make_float4(b[0], b[1], b[2], b[3]);
        s.high[v] = make_float4(b[4], b[5], b[6], b[7]);
      }
    }
    cluster_reduce(kl, 2, ex, cluster, Sum{});
  }

  // Sweep 3: the gradient row G', written over z_s (this CTA read its part
  // of z_s into shared memory in sweep 0, and no other CTA touches it).
  if constexpr (kGrad) {
    const float kl_row = kl[0]; // KL(q||m) or KL(q||p), base 2
    for (int v = threadIdx.x; v < vectors; v += kThreads) {
      const int lanes = lanes_of(v);
      float z[kVector], b[kVector], g[kVector];
      load(v, z, b);
#pragma unroll
      for (int j = 0; j < kVector; ++j) {
        g[j] = 0.0f; // the row padding past V stays zero
        if (j < lanes) {
          const float log_q = fmaf(z[j], p.scale, -lse_a);
          const float q = ex2(log_q);
          const float sigma = p.unit_temperature ? q : ex2(fmaf(z[j], kLog2e, -lse_raw));
          float dj;
          if constexpr (kDivergence == Divergence::mixture) {
            // (1-beta)/tau q (log(q/m) - KL(q||m)), in base 2 times ln 2
            dj = p.grad_scale * q * (b[j] - kl_row);
          } else if constexpr (kDivergence == Divergence::reverse_kl) {
            // q (log(q/p) - KL(q||p)) / tau
            dj = p.grad_scale * q * ((log_q - (b[j] - lse_b)) - kl_row);
          } else {
            // (q - p) / tau; KL(p||q) accumulates here, saving a sweep
            const float log_p = b[j] - lse_b;
            const float pr = ex2(log_p);
            kl[1] = fmaf(pr, log_p - log_q, kl[1]);
            dj = p.grad_scale * (q - pr);
          }
          g[j] = fmaf(p.weight_hard, sigma, p.weight_soft * dj);
        }
      }
      out_row[v] = pack(g);
    }
    if constexpr (kDivergence == Divergence::forward_kl) cluster_reduce(kl, 3, ex, cluster, Sum{});
  }

  if (rank == 0 && threadIdx.x == 0) {
    float divergence;
    if constexpr (kDivergence == Divergence::mixture)
      divergence = kLn2 * (p.beta * kl[1] + p.one_minus_beta * kl[0]);
    else if constexpr (kDivergence == Divergence::reverse_kl)
      divergence = kLn2 * kl[0];
    else
      divergence = kLn2 * kl[1];
    const float cross_entropy = kLn2 * lse_raw - target_logit;
    p.row_loss[row] = p.weight_hard * cross_entropy + p.weight_soft * divergence;
  }
  // No CTA may leave while another still reads its exchange slots.
  cluster.sync();
}

constexpr int slice_for(std::int64_t vocab) {
  const std::int64_t per_cta = (vocab + kClusterSize - 1) / kClusterSize;
  return static_cast<int>((per_cta + kVector - 1) / kVector * kVector);
}

constexpr std::size_t dynamic_smem_bytes(int slice) {
  return static_cast<std::size_t>(slice) * (sizeof(__nv_bfloat16) + sizeof(float));
}

template <Divergence kDivergence, bool kGrad>
void launch(const Params &p, std::int64_t rows, cudaStream_t stream) {
  auto *kernel = &row_loss_kernel<kDivergence, kGrad>;
  const std::size_t smem = dynamic_smem_bytes(p.slice);
  // The dynamic shared-memory limit is a per-kernel attribute; raise it to
  // the largest any launch needs (it only ever grows).
  static std::mutex mutex;
  static std::size_t raised = 0;
  {
    std::lock_guard lock(mutex);
    if (smem > raised) {
      CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      raised = smem;
    }
  }
  const dim3 grid(kClusterSize, static_cast<unsigned>(rows));
  kernel<<<grid, kThreads, smem, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace

Divergence divergence_for(double beta) {
  if (beta == 0.0) return Divergence::forward_kl;
  if (beta == 1.0) return Divergence::reverse_kl;
  return Divergence::mixture;
}

std::int64_t row_loss_max_vocab(int device) {
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const std::size_t usable = static_cast<std::size_t>(optin) - sizeof(Exchange);
  const std::size_t slice = usable / (sizeof(__nv_bfloat16) + sizeof(float)) / kVector * kVector;
  return static_cast<std::int64_t>(slice) * kClusterSize;
}

void launch_row_loss(const RowLossArgs &args, cudaStream_t stream) {
  if (args.rows <= 0) return;
  if (args.rows > 65535) throw std::invalid_argument("launch_row_loss: more than 65535 rows in one chunk");
  if (args.vocab <= 0 || args.vocab > std::numeric_limits<int>::max() / 2 || args.ld < args.vocab ||
      args.ld % kVector != 0 || args.student_hidden <= 0 ||
      args.student_hidden > std::numeric_limits<int>::max())
    throw std::invalid_argument("launch_row_loss: bad vocabulary, row stride or hidden size");
  if (args.temperature == 0.0 || !(args.beta >= 0.0 && args.beta <= 1.0))
    throw std::invalid_argument("launch_row_loss: temperature must be nonzero and beta in [0, 1]");
  // The last CTA reads whole 16-byte vectors up to round_up(V, 8) <= ld.
  const int slice = slice_for(args.vocab);
  const Divergence divergence = divergence_for(args.beta);
  const double ln2 = std::log(2.0);
  Params p{};
  p.student = args.student_logits;
  p.teacher = args.teacher_logits;
  p.ld = args.ld;
  p.vocab = static_cast<int>(args.vocab);
  p.slice = slice;
  p.target = args.target;
  p.student_input = args.student_input;
  p.student_weight = args.student_weight;
  p.student_bias = args.student_bias;
  p.student_hidden = static_cast<int>(args.student_hidden);
  p.row_loss = args.row_loss;
  p.scale = static_cast<float>(1.4426950408889634 / args.temperature);
  p.beta = static_cast<float>(args.beta);
  p.one_minus_beta = static_cast<float>(1.0 - args.beta);
  switch (divergence) {
  case Divergence::mixture:
    p.grad_scale = static_cast<float>((1.0 - args.beta) * ln2 / args.temperature);
    break;
  case Divergence::reverse_kl:
    p.grad_scale = static_cast<float>(ln2 / args.temperature);
    break;
  case Divergence::forward_kl:
    p.grad_scale = static_cast<float>(1.0 / args.temperature);
    break;
  }
  p.weight_hard = static_cast<float>(args.weight_hard);
  p.weight_soft = static_cast<float>(args.weight_soft);
  p.ignore_index = args.ignore_index;
  p.unit_temperature = args.temperature == 1.0;

  const bool grad = args.write_grad;
  switch (divergence) {
  case Divergence::mixture:
    grad ? launch<Divergence::mixture, true>(p, args.rows, stream)
         : launch<Divergence::mixture, false>(p, args.rows, stream);
    break;
  case Divergence::forward_kl:
    grad ? launch<Divergence::forward_kl, true>(p, args.rows, stream)
         : launch<Divergence::forward_kl, false>(p, args.rows, stream);
    break;
  case Divergence::reverse_kl:
    grad ? launch<Divergence::reverse_kl, true>(p, args.rows, stream)
         : launch<Divergence::reverse_kl, false>(p, args.rows, stream);
    break;
  }
}

} // namespace kibench::gpu::fused
