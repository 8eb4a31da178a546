// kibench's own Hopper GEMM for the grad W product of the fused loss, a
// lab study (not shipped): per token chunk of R rows
//   D[v, h] = C[v, h] + Σ_r G'[r, v] · X[r, h]      (D = C + G'ᵀ · X)
// with G' [R, V] and X [R, Hs] bf16 row-major (the row kernel's G' over the
// logit buffer, and the chunk's x_s) and C, D [V, Hs] fp32 row-major (the
// grad W accumulator; D may be C itself). In wgmma's terms M = V, N = Hs,
// K = R, and both operands are MN-major: G'ᵀ is [V, R] with V contiguous,
// X is [R, Hs] with Hs contiguous.
//
// What it tries: cuBLASLt's beta = 1 GEMM reads and writes the accumulator
// (8 bytes an element, 2.1 GB a chunk at V = 128256, Hs = 2048) around its
// products, which costs little at fused's 2816-row chunks and a quarter of
// the GEMM at fused-lean's 987 (docs/perf.md, 2026-12-05). Here each
// consumer thread loads its part of C into registers when a tile starts,
// so the reads run under the tile's products, and adds and stores after
// them. grad_weight_gemm.cu gives the design; the study
// (grad_weight_gemm_study.cpp) checks it against cuBLASLt and fp64 and
// times it.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::dev::gemm {

struct GradWeightGemm {
  std::int64_t vocab = 0, hidden = 0, rows = 0; // M = V, N = Hs, K = R
  const void *g = nullptr;                      // G' [rows, vocab] bf16, row stride ldg
  std::int64_t ldg = 0;
  const void *x = nullptr; // X [rows, hidden] bf16, row stride ldx
  std::int64_t ldx = 0;
  // C and D [vocab, hidden] fp32 with one row stride ldc; c == d is the
  // in-place accumulation fused does; c == nullptr: D = G'ᵀ · X.
  const float *c = nullptr;
  float *d = nullptr;
  std::int64_t ldc = 0;
  // CTAs a cluster, on adjacent row tiles sharing each X tile by TMA
  // multicast: 1 or 2.
  int cluster = 2;
  // Row tiles visited together (all their column tiles, row fastest);
  // 0: grad_weight_gemm_group_rows(rows, hidden).
  int group_rows = 0;
};

// The default group: one cluster's row tiles at a time (column tiles
// fastest) where X fits in 24 MiB of L2, so each G' panel is read from HBM
// once while X stays in L2; otherwise as many row tiles as fit 24 MiB of
// G' panels, at least 2.
[[nodiscard]] int grad_weight_gemm_group_rows(std::int64_t rows, std::int64_t hidden);

// Whether grad_weight_gemm takes these operands: shapes within int32 and
// positive, hidden a multiple of 8 (the epilogue's column groups), G' and
// X 16-byte aligned with row strides of whole 16-byte units at least their
// widths (TMA), D (and C where given) 8-byte aligned with an even row
// stride of at least hidden (the epilogue moves column pairs), a cluster
// of 1 or 2.
[[nodiscard]] bool grad_weight_gemm_supported(const GradWeightGemm &g);

// The CTAs grad_weight_gemm launches on `ctas` SMs: as many clusters as
// fit at once (persistent), within `ctas`.
[[nodiscard]] int grad_weight_gemm_resident_ctas(int cluster, int ctas);

// Enqueues the product on `stream` on at most `ctas` CTAs. Throws
// std::invalid_argument where grad_weight_gemm_supported is false.
void grad_weight_gemm(const GradWeightGemm &g, int ctas, cudaStream_t stream);

} // namespace kibench::dev::gemm
