// grad_weight_gemm.hpp says what this GEMM computes. Built from
// kernels/lm_head/fused/abt_gemm.cu's pieces (TMA ring, mbarriers, warp
// specialization, persistent grid, clusters sharing an operand by
// multicast, grouped tile order), with the operands MN-major and the
// epilogue reading the fp32 accumulator during the mainloop.
//
// Warps. One producer warpgroup (one thread issues TMA copies, the rest
// idle at 40 registers) and two consumer warpgroups, each owning 64 rows
// (V) of the CTA's 128 x 128 output tile and issuing wgmma m64n128k16 with
// both operands MN-major from shared memory. Persistent: one CTA per SM
// loops over output tiles; the producer runs ahead into the next tile.
//
// Shared memory, 1024-byte aligned for the 128-byte swizzle, six stages:
//   a[6]   128 (V) x 64 (R) of G'ᵀ: two TMA boxes of {64 along V, 64 rows
//          of G'}, 8 KiB each; consumer c reads box c
//   b[6]   128 (Hs) x 64 (R) of X: two boxes of {64 along Hs, 64 rows}
//   full[6], empty[6]  mbarriers, as in abt_gemm.cu
// 6 · 32 KiB + 96 B + 1 KiB of alignment = 197,728 B, one CTA per SM.
// There is no staging buffer (the tile leaves from registers), so the
// room goes to stages: six hold 6 of the 16 K blocks of an R = 987 tile,
// which the producer fills for the next tile while the consumers add and
// store. Seven would fit (230,512 B) but move the SM's shared-memory
// carve-out from 196 to 228 KiB and shrink L1 from 60 to 28 KiB, and the
// C loads (64 KiB in flight a CTA) pass through L1.
//
// Why 128 x 128 and m64n128k16. Each consumer thread holds its 64 x 128
// fp32 accumulator slice (64 registers) and, from the start of the tile,
// the same 64 elements of C (64 more): with addresses and predicates the
// consumer code uses registers up to R153 (SASS of the sm_90a build; no
// spills, no local memory), within the 232 setmaxnreg gives a consumer (40
// for the producer warpgroup: 128 · 40 + 256 · 232 = 64,512 of 65,536, as
// in abt_gemm). A 128 x 256 tile would need 128 + 128 registers for the
// accumulator and its prefetch alone, more than a thread can have; 128 x
// 192 (96 + 96) fits but cuts a 2048-wide row into 10.67 tiles. 128 x 128
// divides Hs = 512 and 2048 and is the tile cuBLASLt's tuning picks for
// this product (run labels, 2026-12-04: "tile 128x128, cluster 1x2x1").
// It moves 32 KiB of operands from L2 per 512 tensor-core clocks, 64 B a
// clock an SM, more than the logit GEMM's single-CTA 128 x 192 kernel (53)
// when Nsight measured L2 at 85 % of its peak (docs/perf.md, gemm-v2); so
// CTAs pair in clusters of two on adjacent V tiles and share each X tile by
// multicast (48 B a clock).
//
// The accumulator under the products. When a tile starts, each consumer
// thread issues its 32 eight-byte loads of C (ld.global.cs: evict first,
// the lines are read once here and next written by the same thread)
// before it waits on the first stage, adds them after wgmma.wait_group 0
// and stores D (st.global.cs) from registers. 64 KiB of C are in flight
// per CTA for the whole mainloop (16 K blocks at R = 987: 8,192 tensor
// clocks), far more than HBM's latency needs. No thread reads what another
// writes, so D may be C itself. In wgmma's accumulator layout warp w of a
// consumer holds rows 16w + l/4 and 16w + l/4 + 8 (lane l), columns
// 8j + 2(l % 4) + {0, 1} in d[4j..4j+3] (j = 0..15): each load and store is
// one adjacent column pair, and a warp's instruction covers 8 rows x 32
// bytes, whole 32-byte sectors.
//
// Tile order. X of a chunk is small (987 x 2048 bf16: 4 MB; 2816 rows:
// 11.5 MB) and stays in L2 whatever the order; G' is read once per row
// tile pair and C and D stream. So by default a cluster's row tiles are
// visited across all their column tiles before the next pair
// (grad_weight_gemm_group_rows): 16 clusters at once share one G' panel
// (read from HBM once) and together read and write whole 8 KB rows of C.
// A wider X falls back to abt_gemm's groups sized to L2.
//
// MN-major descriptors, checked against the sources (the reason each
// number is what it is):
// - PTX ISA 9.7.15.5.1.2, "Shared Memory Matrix Layout" (docs.nvidia.com
//   parallel-thread-execution, #asynchronous-warpgroup-level-matrix-
//   shared-memory-layout; read in its Markdown copy): imm-trans-a = 1
//   makes A M-major and imm-trans-b = 1 makes B N-major; the 128-byte
//   swizzle atom of an MN-major operand is 8 x 8 in 16-byte units (64 bf16
//   along MN by 8 along K); canonical 128B MN-major layout, T = 8 elements
//   of 16 bits: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)), Swizzle<3,4,3>.
// - Same section, "Leading Dimension Byte Offset", MN-major swizzled:
//   "offset from the first (swizzle-byte-size/16) rows to the next
//   (swizzle-byte-size/16) rows" (rows along MN in 16-byte units: the next
//   64 elements along MN); "Stride Dimension Byte Offset", MN-major
//   swizzled: "offset from the first 8 columns to the next 8 columns"
//   (the next 8 rows along K). Here: a box is 64 K rows of 128 bytes, so
//   SBO = 8 · 128 = 1024 B, and the second 64-element half of B's 128
//   columns is the next box, LBO = 64 · 128 = 8192 B (A's 64 rows a
//   consumer are one box: LBO unused).
// - "Matrix Descriptor Format": start address, LBO and SBO encoded as
//   (x & 0x3FFFF) >> 4 in bits 0-13, 16-29, 32-45; base offset 0 when the
//   swizzle pattern starts on a 1024-byte boundary; 128-byte swizzle = 1
//   in bits 62-63.
// - wgmma.mma_async: "The transpose operation is only supported for the
//   wgmma.mma_async variants with .f16/.bf16 types on matrices accessed
//   from shared memory using matrix descriptors" (bf16, both from shared
//   memory here).
// - CUTLASS (github.com/NVIDIA/cutlass, 7107b05, Aug 2026),
//   include/cute/atom/mma_traits_sm90_gmma.hpp, make_gmma_desc<Major::MN>:
//   for B128 in uint128 units ((8,n),(8,k)):((1,LBO),(8,SBO)), the stride
//   of the MN repeat goes to leading_byte_offset_ and that of the K repeat
//   to stride_byte_offset_ (both swapped only for INTERLEAVE);
//   include/cute/arch/mma_sm90_gmma.hpp: GMMA::Major::MN = 1 is what
//   MMA_64x128x16_F32BF16BF16_SS passes as the tnspA/tnspB immediates;
//   include/cute/arch/mma_sm90_desc.hpp: the descriptor's bit fields.
// - DeepGEMM (github.com/deepseek-ai/DeepGEMM, 54e2261, Jun 2026),
//   deep_gemm/include/deep_gemm/mma/sm90.cuh, make_gmma_desc for an
//   MN-major operand loaded as TMA boxes of {64 along MN, BLOCK_K}:
//   SBO = 8 · 64 · 2 = 1024 B, LBO = BLOCK_K · 64 · 2 bytes (8192 for
//   BLOCK_K = 64), and a K step of k elements advances the start address
//   by k · 64 elements (get_gmma_desc_stride_k): +2048 B for k = 16.
// None of this has run on a GPU yet; the study's first case (V = 1000,
// Hs = 64, R = 33, every tail) against fp64 is the check.
#include "dev/gemm/grad_weight_gemm.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <cuda.h>
#include <cuda_bf16.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/tensor_map.hpp"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace kibench::dev::gemm {

namespace {

namespace tma = gpu::tma;
namespace wgmma = gpu::wgmma;

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 64;
constexpr int kStages = 6;
constexpr int kConsumers = 2; // warpgroups, 64 rows (V) of the tile each
constexpr int kConsumerRows = kBlockM / kConsumers;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kBox = gpu::kTensorMapBoxColumns;                     // 64 elements along MN a box
constexpr std::uint32_t kBoxBytes = kBox * kBlockK * 2;             // 64 K rows of 128 bytes
constexpr std::uint32_t kATileBytes = (kBlockM / kBox) * kBoxBytes; // consumer c reads box c
constexpr std::uint32_t kBTileBytes = (kBlockN / kBox) * kBoxBytes;
constexpr std::uint32_t kStageBytes = kATileBytes + kBTileBytes;
constexpr std::uint32_t kBarriersOffset = kStages * kStageBytes;
constexpr int kSharedBytes = static_cast<int>(kBarriersOffset) + 2 * kStages * 8 + 1024;
constexpr int kSharedLimit = 227 * 1024;       // the opt-in maximum a CTA on sm_90
constexpr std::uint32_t kStepBytes = 16 * 128; // one wgmma K step: 16 K rows of 128 bytes
constexpr int kColumnGroups = kBlockN / 8;     // the accumulator's 8-column groups j
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert(kConsumerRows == kBox, "a consumer's 64 rows are one A box");
static_assert(kBlockK % 16 == 0 && kBlockN == 2 * kBox);
static_assert(kSharedBytes <= kSharedLimit);
static_assert(kProducerRegisters * 128 + kConsumerRegisters * 128 * kConsumers <= 65536);

struct Shape {
  int vocab, hidden;
  int tiles_n, k_blocks;
  int cluster_rows; // row tiles / the cluster size, rounded up
  int group;        // cluster rows visited together
  const float *c;   // nullptr: D = G'ᵀ X
  float *d;
  long long ldc;
};

// As abt_gemm.cu: work item `item` of the grouped order, as the cluster's
// first row tile divided by the cluster size and the column tile; within
// a group of s.group cluster rows the row changes fastest.
__device__ __forceinline__ void item_coordinates(const Shape &s, int item, int &cluster_row, int &tile_n) {
  const int per_group = s.group * s.tiles_n;
  const int group = item / per_group;
  const int first = group * s.group;
  const int rows = min(s.cluster_rows - first, s.group);
  const int in_group = item - group * per_group;
  cluster_row = first + in_group % rows;
  tile_n = in_group / rows;
}

__device__ __forceinline__ void next_stage(int &stage, std::uint32_t &phase) {
  if (++stage == kStages) {
    stage = 0;
    phase ^= 1;
  }
}

// The thread's place in its consumer's 64 x 128 slice of the output tile:
// rows `row` and row + 8 of D, columns `column` + 8j + {0, 1}, j below
// `groups` (the 8-column groups inside D; hidden is a multiple of 8).
struct Fragment {
  int row, column, groups;
  bool inside[2]; // row and row + 8 below vocab
};

__device__ __forceinline__ Fragment fragment_of(const Shape &s, int tile_m, int tile_n, int consumer) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32 % 4);
  Fragment f{};
  f.row = tile_m * kBlockM + consumer * kConsumerRows + warp * 16 + lane / 4;
  f.column = tile_n * kBlockN + 2 * (lane % 4);
  f.groups = min(kColumnGroups, (s.hidden - tile_n * kBlockN) / 8);
  f.inside[0] = f.row < s.vocab;
  f.inside[1] = f.row + 8 < s.vocab;
  return f;
}

// Two adjacent elements of C at `p` where `valid`, else zeros, as one
// predicated ld.global.cs (evict first: read once here, then overwritten
// by the same thread). Inline and volatile so that the compiler neither
// branches around it (a plain conditional load compiled to a branch per
// pair) nor moves it past the mainloop's barrier waits and wgmma, towards
// its use.
__device__ __forceinline__ float2 load_pair(const float *p, bool valid) {
  float2 v;
  asm volatile("{\n"
               ".reg .pred p;\n"
               "setp.ne.b32 p, %3, 0;\n"
               "mov.b32 %0, 0;\n"
               "mov.b32 %1, 0;\n"
               "@p ld.global.cs.v2.f32 {%0, %1}, [%2];\n"
               "}\n"
               : "=f"(v.x), "=f"(v.y)
               : "l"(p), "r"(static_cast<int>(valid)));
  return v;
}

// C's elements of the fragment into c[] in the accumulator's order (zero
// outside D, or everywhere without C).
__device__ __forceinline__ void load_accumulator(const Shape &s, const Fragment &f, float (&c)[64]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    // Without C, D's addresses stand in (never read: every pair invalid).
    const float *line =
        (s.c != nullptr ? s.c : s.d) + static_cast<long long>(f.row + 8 * half) * s.ldc + f.column;
    const bool row_valid = s.c != nullptr && f.inside[half];
#pragma unroll
    for (int j = 0; j < kColumnGroups; ++j) {
      const float2 v = load_pair(line + 8 * j, row_valid && j < f.groups);
      c[4 * j + 2 * half] = v.x;
      c[4 * j + 2 * half + 1] = v.y;
    }
  }
}

__device__ __forceinline__ void store_sum(const Shape &s, const Fragment &f, const float (&d)[64],
                                          const float (&c)[64]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float *line = s.d + static_cast<long long>(f.row + 8 * half) * s.ldc + f.column;
#pragma unroll
    for (int j = 0; j < kColumnGroups; ++j)
      if (f.inside[half] && j < f.groups)
        __stcs(reinterpret_cast<float2 *>(line + 8 * j),
               make_float2(d[4 * j + 2 * half] + c[4 * j + 2 * half],
                           d[4 * j + 2 * half + 1] + c[4 * j + 2 * half + 1]));
  }
}

// kCluster CTAs of a cluster take adjacent row tiles of one column tile:
// each loads its own G' boxes and box `rank` of the X tile, which the copy
// engine writes into every CTA of the cluster (abt_gemm.cu: B by
// multicast, every stage's empty barrier counting the consumers of the
// whole cluster).
template <int kCluster>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    grad_weight_gemm_kernel(const __grid_constant__ CUtensorMap g_map,
                            const __grid_constant__ CUtensorMap x_map, const Shape s) {
  static_assert(kBlockN / kCluster == kBox || kCluster == 1, "a cluster CTA multicasts one X box");
  extern __shared__ unsigned char raw[];
  const std::uint32_t raw_address = tma::shared_address(raw);
  const std::uint32_t base = raw_address + (1024 - raw_address % 1024) % 1024;
  const auto a_tile = [&](int stage) { return base + stage * kATileBytes; };
  const auto b_tile = [&](int stage) { return base + kStages * kATileBytes + stage * kBTileBytes; };
  const auto full = [&](int stage) { return base + kBarriersOffset + 8 * stage; };
  const auto empty = [&](int stage) { return base + kBarriersOffset + 8 * (kStages + stage); };
  const int rank = kCluster > 1 ? static_cast<int>(tma::cluster_rank()) : 0;
  const int cluster = static_cast<int>(blockIdx.x) / kCluster,
            clusters = static_cast<int>(gridDim.x) / kCluster;
  const int items = s.cluster_rows * s.tiles_n;

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < kStages; ++stage) {
      tma::barrier_init(full(stage), 1);
      tma::barrier_init(empty(stage), kConsumers * kCluster);
    }
    tma::fence_barrier_init();
  }
  if constexpr (kCluster > 1)
    tma::cluster_sync();
  else
    __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  if (warpgroup == 0) {
    tma::release_registers<kProducerRegisters>();
    if (threadIdx.x == 0) {
      tma::prefetch_map(&g_map);
      tma::prefetch_map(&x_map);
      int stage = 0;
      std::uint32_t phase = 0;
      for (int item = cluster; item < items; item += clusters) {
        int cluster_row = 0, tile_n = 0;
        item_coordinates(s, item, cluster_row, tile_n);
        const int tile_m = cluster_row * kCluster + rank;
        for (int kb = 0; kb < s.k_blocks; ++kb) {
          // Box coordinates are (column, row) of G' [R, V] and X [R, Hs]:
          // along V or Hs, then the chunk's token rows, which TMA reads as
          // zeros past R (the K tail) and past V or Hs (the M and N tails).
          tma::barrier_wait(empty(stage), phase ^ 1);
          tma::barrier_arrive_expect_bytes(full(stage), kStageBytes);
          for (int box = 0; box < kBlockM / kBox; ++box)
            tma::load_2d(a_tile(stage) + box * kBoxBytes, &g_map, full(stage), tile_m * kBlockM + box * kBox,
                         kb * kBlockK);
          if constexpr (kCluster == 1) {
            for (int box = 0; box < kBlockN / kBox; ++box)
              tma::load_2d(b_tile(stage) + box * kBoxBytes, &x_map, full(stage),
                           tile_n * kBlockN + box * kBox, kb * kBlockK);
          } else {
            tma::load_2d_multicast(b_tile(stage) + rank * kBoxBytes, &x_map, full(stage),
                                   tile_n * kBlockN + rank * kBox, kb * kBlockK, (1u << kCluster) - 1);
          }
          next_stage(stage, phase);
        }
      }
      // Every consumer of the cluster has made its last arrival on this
      // CTA's barriers once every stage is empty again (abt_gemm.cu).
      if constexpr (kCluster > 1)
        for (int i = 0; i < kStages; ++i) {
          tma::barrier_wait(empty(stage), phase ^ 1);
          next_stage(stage, phase);
        }
    }
    return;
  }

  tma::claim_registers<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const bool leader = threadIdx.x % 128 == 0; // arrives for its warpgroup
  const auto release = [&](int stage) {
    if constexpr (kCluster == 1)
      tma::barrier_arrive(empty(stage));
    else
      for (int cta = 0; cta < kCluster; ++cta) tma::barrier_arrive_cluster(empty(stage), cta);
  };
  int stage = 0;
  std::uint32_t phase = 0;
  float d[64];
  float c[64];
  for (int item = cluster; item < items; item += clusters) {
    int cluster_row = 0, tile_n = 0;
    item_coordinates(s, item, cluster_row, tile_n);
    const Fragment f = fragment_of(s, cluster_row * kCluster + rank, tile_n, consumer);
    // Issued before the first stage is waited on; the registers are read
    // only after the last product, so the loads run under all of them.
    load_accumulator(s, f, c);
    int previous = 0;
    for (int kb = 0; kb < s.k_blocks; ++kb) {
      tma::barrier_wait(full(stage), phase);
      const std::uint32_t a = a_tile(stage) + consumer * kBoxBytes;
      const std::uint32_t b = b_tile(stage);
      wgmma::fence();
#pragma unroll
      for (int k = 0; k < kBlockK / 16; ++k)
        wgmma::mma_m64n128k16_bf16_mn_major(
            d, wgmma::swizzle128_mn_major_descriptor(a + k * kStepBytes, kBoxBytes),
            wgmma::swizzle128_mn_major_descriptor(b + k * kStepBytes, kBoxBytes), kb > 0 || k > 0);
      wgmma::commit_group();
      // The group before this one has finished reading its stage.
      wgmma::wait_group<1>();
      if (kb > 0 && leader) release(previous);
      previous = stage;
      next_stage(stage, phase);
    }
    wgmma::wait_group<0>();
    if (leader) release(previous);
    store_sum(s, f, d, c);
  }
}

template <int kCluster> void configure() {
  static const bool configured = [] {
    CUDA_CHECK(cudaFuncSetAttribute(grad_weight_gemm_kernel<kCluster>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    return true;
  }();
  (void)configured;
}

// As abt_gemm.cu: as many whole clusters as fit on the GPU at once (each
// CTA fills an SM), within `ctas`; counted once per process.
template <int kCluster> int resident_ctas(int ctas) {
  configure<kCluster>();
  if constexpr (kCluster == 1) {
    return ctas;
  } else {
    static const int clusters = [] {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(kCluster);
      config.blockDim = dim3(kThreads);
      config.dynamicSmemBytes = kSharedBytes;
      int fit = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, grad_weight_gemm_kernel<kCluster>, &config));
      if (fit < 1) throw std::runtime_error("grad_weight_gemm: no cluster fits on this GPU");
      return fit;
    }();
    return std::min(ctas, clusters * kCluster) / kCluster * kCluster;
  }
}

template <int kCluster> void launch(const GradWeightGemm &g, int ctas, cudaStream_t stream) {
  // G' as the 2-D tensor [R rows, V columns] and X as [R, Hs], in boxes of
  // 64 columns (128 bytes, the swizzle's row) by 64 token rows.
  const CUtensorMap g_map = gpu::bf16_tensor_map(g.g, g.rows, g.vocab, g.ldg, kBlockK);
  const CUtensorMap x_map = gpu::bf16_tensor_map(g.x, g.rows, g.hidden, g.ldx, kBlockK);
  Shape s{};
  s.vocab = static_cast<int>(g.vocab);
  s.hidden = static_cast<int>(g.hidden);
  s.tiles_n = static_cast<int>((g.hidden + kBlockN - 1) / kBlockN);
  s.k_blocks = static_cast<int>((g.rows + kBlockK - 1) / kBlockK);
  const int tiles_m = static_cast<int>((g.vocab + kBlockM - 1) / kBlockM);
  s.cluster_rows = (tiles_m + kCluster - 1) / kCluster;
  const int group_tiles = g.group_rows > 0 ? g.group_rows : grad_weight_gemm_group_rows(g.rows, g.hidden);
  const int groups = (s.cluster_rows * kCluster + group_tiles - 1) / group_tiles;
  s.group = (s.cluster_rows + groups - 1) / groups; // balanced: the last group is not a sliver
  s.c = g.c;
  s.d = g.d;
  s.ldc = g.ldc;
  const long long items = static_cast<long long>(s.cluster_rows) * s.tiles_n;
  if (items > std::numeric_limits<int>::max())
    throw std::invalid_argument("grad_weight_gemm: too many tiles");
  const int grid = static_cast<int>(std::min<long long>(resident_ctas<kCluster>(ctas), items * kCluster));
  if (grid < kCluster) throw std::invalid_argument("grad_weight_gemm: fewer CTAs than one cluster");
  grad_weight_gemm_kernel<kCluster><<<grid, kThreads, kSharedBytes, stream>>>(g_map, x_map, s);
  CUDA_CHECK_LAUNCH();
}

bool fits_int(std::int64_t x) {
  return x > 0 && x <= std::numeric_limits<int>::max();
}

bool pairs_aligned(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p) % 8 == 0;
}

} // namespace

int grad_weight_gemm_group_rows(std::int64_t rows, std::int64_t hidden) {
  constexpr std::int64_t kGroupBytes = 24ll << 20; // half the H200's 50 MB L2, as abt_gemm
  const std::int64_t r = std::max<std::int64_t>(rows, 1);
  if (2 * r * std::max<std::int64_t>(hidden, 1) <= kGroupBytes) return 1;
  return static_cast<int>(std::clamp<std::int64_t>(kGroupBytes / (r * kBlockM * 2), 2, 1 << 20));
}

bool grad_weight_gemm_supported(const GradWeightGemm &g) {
  return fits_int(g.vocab) && fits_int(g.hidden) && fits_int(g.rows) && g.hidden % 8 == 0 &&
         g.ldg >= g.vocab && g.ldx >= g.hidden && gpu::can_map_bf16(g.g, g.ldg) &&
         gpu::can_map_bf16(g.x, g.ldx) && g.d != nullptr && pairs_aligned(g.d) && pairs_aligned(g.c) &&
         g.ldc >= g.hidden && g.ldc % 2 == 0 && (g.cluster == 1 || g.cluster == 2) && g.group_rows >= 0;
}

int grad_weight_gemm_resident_ctas(int cluster, int ctas) {
  return cluster == 2 ? resident_ctas<2>(ctas) : resident_ctas<1>(ctas);
}

void grad_weight_gemm(const GradWeightGemm &g, int ctas, cudaStream_t stream) {
  if (!grad_weight_gemm_supported(g))
    throw std::invalid_argument("grad_weight_gemm: unsupported operands (" + std::to_string(g.vocab) + "x" +
                                std::to_string(g.hidden) + "x" + std::to_string(g.rows) + ", ldg " +
                                std::to_string(g.ldg) + ", ldx " + std::to_string(g.ldx) + ", ldc " +
                                std::to_string(g.ldc) + ", cluster " + std::to_string(g.cluster) + ")");
  if (g.cluster == 2)
    launch<2>(g, ctas, stream);
  else
    launch<1>(g, ctas, stream);
}

} // namespace kibench::dev::gemm
