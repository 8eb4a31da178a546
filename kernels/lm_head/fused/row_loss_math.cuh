// The per-element arithmetic of the row kernel (row_loss.cu has the math):
// the softmax partials and their combines, the load sweep's running
// statistics, the KL terms and G' of one 16-byte vector. Shared by the
// shipped kernel (row_kernel_v6.cu) and the dev
// studies that rearrange where a row lives (dev/fused/, row-v3 among them), so that every
// version computes the same bits from the same vector. For nvcc only.
#pragma once

#include <cfloat>
#include <cmath>

#include "kernels/cuda/fast_math.cuh"
#include "kernels/lm_head/fused/row_loss_device.cuh"

namespace kibench::gpu::fused::detail {

// 2^x on the FMA pipe, for x <= 0, instead of the SFU's ex2: x = j + f with
// j = round(x) (the 1.5 2^23 shift) and |f| <= 1/2, 2^f by a degree-5
// polynomial fitted for relative error (at most 2.4e-7 in fp32, against
// ex2.approx's 2^-22.5), and j added to its exponent bits. x is clamped at
// -125, where 2^x is far below any sum it joins (ex2.approx.ftz gives 0
// below -126). About ten FP32/integer instructions against one MUFU: the
// SM issues 128 of those a clock and 16 MUFU, so a share of a sweep's
// exponentials moved here would run beside the rest on the SFU if the SFU
// bounded the sweep. Measured, it does not (row-v6 singles 3-6 % slower
// with 2 or 3 of 8 here: docs/perf-log.md): a study only.
__device__ __forceinline__ float ex2_fma(float x) {
  x = fmaxf(x, -125.0f);
  const float shifted = x + 12582912.0f; // 1.5 2^23: round(x) in the low mantissa bits
  const float f = x - (shifted - 12582912.0f);
  float p = 1.3277108e-3f;
  p = fmaf(p, f, 9.675762e-3f);
  p = fmaf(p, f, 5.550713e-2f);
  p = fmaf(p, f, 2.4022114e-1f);
  p = fmaf(p, f, 6.9314694e-1f);
  p = fmaf(p, f, 1.0000001f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(shifted) << 23));
}

// 2^x for element j of a vector whose last kFmaLanes elements take the
// FMA pipe's exponential (ex2_fma), the others the SFU's.
template <int kFmaLanes> __device__ __forceinline__ float ex2_lane(int j, float x) {
  return j >= kVector - kFmaLanes ? ex2_fma(x) : ex2(x);
}

// A reduction's values: v[0, P) exponents m and v[P, 2P) sums s of P
// softmax partials (each s 2^m), v[2P, N) plain sums.
template <int P, int N> __device__ __forceinline__ void combine_into(float (&a)[N], const float (&b)[N]) {
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const float big = fmaxf(a[i], b[i]);
    if (big != -INFINITY) { // else both are empty
      a[P + i] = a[P + i] * ex2(a[i] - big) + b[P + i] * ex2(b[i] - big);
      a[i] = big;
    }
  }
#pragma unroll
  for (int i = 2 * P; i < N; ++i) a[i] += b[i];
}

// Rescales each sum v[P + i] from exponent own[i] to v[i].
template <int P, int N> __device__ __forceinline__ void rescale_to(float (&v)[N], const float (&own)[P]) {
#pragma unroll
  for (int i = 0; i < P; ++i) v[P + i] = v[i] == -INFINITY ? 0.0f : v[P + i] * ex2(own[i] - v[i]);
}

// Every lane returns the warp's combined values (xor butterflies: partners
// compute identical results). The maxima first, then each lane rescales its
// sums to them once, then the sums: one ex2 per pair, not one per round.
template <int P, int N> __device__ __forceinline__ void warp_combine(float (&v)[N]) {
  if constexpr (P > 0) {
    float own[P];
#pragma unroll
    for (int i = 0; i < P; ++i) own[i] = v[i];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
#pragma unroll
      for (int i = 0; i < P; ++i) v[i] = fmaxf(v[i], __shfl_xor_sync(0xffffffffu, v[i], offset));
    }
    rescale_to<P>(v, own);
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
#pragma unroll
    for (int i = P; i < N; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], offset);
  }
}

// Adds 2^(x scale) over a vector (its first `lanes` elements unless kFull)
// to the running (m, s), m in base-2 units: one rescale per vector whose
// maximum is new. kScaled: x is already scaled (scale unused). Otherwise
// scale > 0, so the vector's maximum is scale times that of x (one multiply
// a vector), and each element costs one FFMA, x scale - m, instead of a
// multiply and a subtraction.
template <bool kFull, bool kScaled, int kFmaLanes = 0>
__device__ __forceinline__ void accumulate(float &m, float &s, const float (&x)[kVector], int lanes,
                                           float scale) {
  float top;
  if constexpr (kFull) {
    top = fmaxf(fmaxf(fmaxf(x[0], x[1]), fmaxf(x[2], x[3])), fmaxf(fmaxf(x[4], x[5]), fmaxf(x[6], x[7])));
  } else {
    top = -INFINITY;
#pragma unroll
    for (int j = 0; j < kVector; ++j)
      if (j < lanes) top = fmaxf(top, x[j]);
  }
  if constexpr (!kScaled) top *= scale;
  if (top > m) {
    s *= ex2(m - top); // 0 while m is still -inf
    m = top;
  }
  float e[kVector];
#pragma unroll
  for (int j = 0; j < kVector; ++j)
    e[j] = (kFull || j < lanes) ? ex2_lane<kFmaLanes>(j, kScaled ? x[j] - m : fmaf(x[j], scale, -m)) : 0.0f;
  s += ((e[0] + e[1]) + (e[2] + e[3])) + ((e[4] + e[5]) + (e[6] + e[7]));
}

// The load sweep's arithmetic on one vector: the running statistics of
// a = z scale, b = z_t scale and (tau != 1) z log2(e). stats: [m_a, m_b,
// (m_raw), s_a, s_b, (s_raw), target logit]. b leaves as shared memory
// holds it (teacher_form): z_t itself with tau = 1 (scale = log2 e > 0, so
// only the vectors' maxima are scaled, in accumulate, and teacher_log2p
// scales b where it is read), z_t scale otherwise.
// kFmaLanes: the last kFmaLanes elements of each vector take ex2_fma (at
// tau = 1; the studies' lanes, row_kernel_v6.cu).
template <bool kFull, bool kUnitTemperature, int N, int kFmaLanes = 0>
__device__ __forceinline__ void load_statistics(const Params &p, const float (&z)[kVector],
                                                float (&b)[kVector], int lanes, float (&stats)[N]) {
  constexpr int P = kUnitTemperature ? 2 : 3;
  if constexpr (kUnitTemperature) {
    accumulate<kFull, false, kFmaLanes>(stats[0], stats[P], z, lanes, p.scale);
    accumulate<kFull, false, kFmaLanes>(stats[1], stats[P + 1], b, lanes, p.scale);
  } else {
    float a[kVector];
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      a[j] = z[j] * p.scale;
      b[j] *= p.scale;
    }
    accumulate<kFull, true>(stats[0], stats[P], a, lanes, p.scale);
    accumulate<kFull, true>(stats[1], stats[P + 1], b, lanes, p.scale);
#pragma unroll
    for (int j = 0; j < kVector; ++j) a[j] = z[j] * kLog2e;
    accumulate<kFull, true>(stats[2], stats[P + 2], a, lanes, p.scale);
  }
}

// b as load_statistics leaves it, from z_t alone: for a kernel that reads a
// vector again from global memory instead of shared memory. At tau != 1 the
// compiler may contract this product into the subtraction that reads it,
// where shared memory holds the rounded product: the two paths can differ
// in the last bit of log2 q. (__fmul_rn would forbid the contraction, and
// cost row-v6's tau != 1 instantiations up to 104 bytes of spills.)
template <bool kUnitTemperature>
__device__ __forceinline__ void teacher_form(const Params &p, float (&b)[kVector]) {
  if constexpr (!kUnitTemperature) {
#pragma unroll
    for (int j = 0; j < kVector; ++j) b[j] *= p.scale;
  }
}

// log2 p of a teacher element as shared memory holds it: z_t (tau = 1) or
// z_t scale.
template <bool kUnitTemperature>
__device__ __forceinline__ float teacher_log2p(const Params &p, float b, const RowStats &st) {
  return kUnitTemperature ? fmaf(b, p.scale, -st.lse_b) : b - st.lse_b;
}

// The KL terms of one vector (kl_sweep of row_loss_device.cuh, without its
// per-element masks on whole vectors); the mixture replaces b by log2(q/m).
// q_out, if given, receives the mixture's q (for gradient_values, which
// would compute the same bits again).
template <Divergence kDivergence, bool kUnitTemperature, bool kFull, int kFmaLanes = 0>
__device__ __forceinline__ void kl_terms(const Params &p, const float (&z)[kVector], float (&b)[kVector],
                                         int lanes, const RowStats &st, float &kl0, float &kl1,
                                         float *q_out = nullptr) {
  // Two chains per sum: even and odd elements.
  float even0 = 0.0f, odd0 = 0.0f, even1 = 0.0f, odd1 = 0.0f;
#pragma unroll
  for (int j = 0; j < kVector; ++j) {
    const bool in = kFull || j < lanes;
    float &acc0 = j % 2 == 0 ? even0 : odd0;
    float &acc1 = j % 2 == 0 ? even1 : odd1;
    const float log_q = fmaf(z[j], p.scale, -st.lse_a), log_p = teacher_log2p<kUnitTemperature>(p, b[j], st);
    if constexpr (kDivergence == Divergence::mixture) {
      const float q = ex2_lane<kFmaLanes>(j, log_q), pr = ex2_lane<kFmaLanes>(j, log_p);
      // m = 0 only where q and p both underflowed; FLT_MIN keeps the terms
      // finite, and they vanish with q and p. Added rather than a clamp (one
      // instruction fewer): below the rounding of any m >= 2^-102.
      const float log_m = lg2(fmaf(p.one_minus_beta, q, fmaf(p.beta, pr, FLT_MIN)));
      const float log_q_over_m = log_q - log_m;
      if (in) {
        acc0 = fmaf(q, log_q_over_m, acc0);
        acc1 = fmaf(pr, log_p - log_m, acc1);
      }
      b[j] = log_q_over_m;
      if (q_out != nullptr) q_out[j] = q;
    } else if constexpr (kDivergence == Divergence::reverse_kl) {
      if (in) acc0 = fmaf(ex2(log_q), log_q - log_p, acc0);
    } else { // forward KL, forward pass only
      if (in) acc1 = fmaf(ex2(log_p), log_p - log_q, acc1);
    }
  }
  kl0 += even0 + odd0;
  kl1 += even1 + odd1;
}

// The gradient row's coefficients: G' = w_h sigma + q (c_lin x + c_const)
// with x = log2(q/m) (mixture) or log2(q/p) (reverse KL), i.e. c_lin =
// w_s grad_scale and c_const = -c_lin KL; the forward KL has
// G' = w_h sigma + c_lin (q - p).
struct GradientCoefficients {
  float c_lin, c_const;
};

// G' of one vector from z_s and b (teacher_form; log2(q/m) for the mixture,
// as kl_terms leaves it); the forward KL's KL(p||q) accumulates into kl1.
// q_in, if given, holds q = 2^(z scale - lse_a) as kl_terms computed it.
template <Divergence kDivergence, bool kUnitTemperature, bool kFull>
__device__ __forceinline__ void gradient_values(const Params &p, const float (&z)[kVector],
                                                const float (&b)[kVector], int lanes, const RowStats &st,
                                                const GradientCoefficients &c, float &kl1,
                                                float (&g)[kVector], const float *q_in = nullptr) {
  float even1 = 0.0f, odd1 = 0.0f;
#pragma unroll
  for (int j = 0; j < kVector; ++j) {
    const float log_q = fmaf(z[j], p.scale, -st.lse_a);
    const float q = q_in != nullptr ? q_in[j] : ex2(log_q);
    float value;
    if constexpr (kDivergence == Divergence::forward_kl) {
      const float log_p = teacher_log2p<kUnitTemperature>(p, b[j], st);
      const float pr = ex2(log_p);
      float &acc1 = j % 2 == 0 ? even1 : odd1;
      if (kFull || j < lanes) acc1 = fmaf(pr, log_p - log_q, acc1);
      value = kUnitTemperature ? fmaf(p.weight_hard + c.c_lin, q, -c.c_lin * pr)
                               : fmaf(c.c_lin, q - pr, p.weight_hard * ex2(fmaf(z[j], kLog2e, -st.lse_raw)));
    } else {
      const float x =
          kDivergence == Divergence::mixture ? b[j] : log_q - teacher_log2p<kUnitTemperature>(p, b[j], st);
      if constexpr (kUnitTemperature) {
        value = q * fmaf(c.c_lin, x, c.c_const + p.weight_hard);
      } else {
        value = fmaf(p.weight_hard, ex2(fmaf(z[j], kLog2e, -st.lse_raw)), q * fmaf(c.c_lin, x, c.c_const));
      }
    }
    g[j] = (kFull || j < lanes) ? value : 0.0f; // the row padding past V stays zero
  }
  kl1 += even1 + odd1;
}

} // namespace kibench::gpu::fused::detail
