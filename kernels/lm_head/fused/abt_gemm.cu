// abt_gemm.hpp says what this GEMM is and how its warps divide the work.
// Shared memory, 1024-byte aligned for the 128-byte swizzle (tile n256,
// three stages; n192 has four):
//   a[S]        128 x 64 bf16 tiles of A (16 KiB each)
//   b[S]        256 x 64 bf16 tiles of B (32 KiB each)
//   staging[2]  each consumer's 64 x 256 bf16 output, as four 64 x 64
//               boxes in the swizzled layout the TMA store reads (32 KiB each)
//   full[S], empty[S]  mbarriers: "the stage's copies have landed" (one
//   producer arrival + 48 KiB of transactions) and "both consumer
//   warpgroups are done reading it" (two arrivals a CTA of the cluster)
// 208 KiB in all, one CTA per SM.
//
// Version 3. Version 1 (128 x 256 tiles, the accumulators stored straight
// to global memory) ran 10-20 % behind cuBLASLt on the seed's logit shapes
// (docs/perf.md): both consumers stored their tile while the tensor cores
// waited. Version 2 wrote the tile to shared memory for a TMA store that
// runs under the next tile's products, 128 x 192 to leave room for four
// stages, with clusters of two sharing B by multicast: 4-6 % behind.
// Version 3 goes back to 256 columns with three stages (14 % fewer operand
// bytes from L2 a FLOP) and visits row tiles in groups sized to L2, so a
// 2816-row logit chunk reads W from HBM once instead of twice: 1-3 %
// behind cuBLASLt, bit-identical to it.
//
// Row statistics (AbtGemm::row_stats): two of the producer warpgroup's idle
// warps read each consumer's staged bf16 tile, reduce every row to (max,
// sum of powers of two) and write it, while the consumers go on to the
// next tile; the consumers wait for them only before staging again, a
// tile later.
#include "kernels/lm_head/fused/abt_gemm.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <cuda.h>
#include <cuda_bf16.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fast_math.cuh"
#include "kernels/cuda/tensor_map.hpp"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace kibench::gpu::gemm {

namespace {

constexpr int kBlockM = 128, kBlockK = 64;
constexpr int kConsumers = 2; // warpgroups, 64 rows of the tile each
constexpr int kConsumerRows = kBlockM / kConsumers;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kStatsWarps = 2; // the producer warpgroup's warps 1-2, a thread a row of a consumer's tile
constexpr std::uint32_t kATileBytes = kBlockM * kBlockK * 2;
constexpr std::uint32_t kBoxBytes = kConsumerRows * 128; // a 64 x 64 bf16 box: 64 rows of 128 bytes
constexpr int kSharedLimit = 227 * 1024;                 // the opt-in maximum a CTA on sm_90
// Named barriers (0 is __syncthreads): kConsumerBarrier + consumer within a
// consumer warpgroup; with row statistics kStagedBarrier + consumer ("the
// consumer's tile is staged") and kStatsReadBarrier + consumer ("the
// statistics warps have read it"), each among the consumer's 128 threads
// and the 64 of the statistics warps.
constexpr int kConsumerBarrier = 1, kStagedBarrier = 3, kStatsReadBarrier = 5;
constexpr int kStatsBarrierThreads = 128 + 32 * kStatsWarps;
static_assert(32 * kStatsWarps == kConsumerRows);

// The compile-time shape of one kernel: tile width along n, ring depth, and
// how the shared memory divides. A consumer's 64 x kBlockN output leaves as
// 64 x 64 boxes through its own staging buffer. (Four stages of 128 x 256
// leave room for half of each buffer only: storing the tile in two rounds,
// with a wait for the TMA engine to have read the first, ran 1-2 % slower
// than three stages on the H200, and one buffer that the two consumers
// took turns on, staggering them, 2-4 % slower.)
template <int kBlockN_, int kStages_> struct Config {
  static constexpr int kBlockN = kBlockN_, kStages = kStages_;
  static constexpr std::uint32_t kBTileBytes = kBlockN * kBlockK * 2;
  static constexpr std::uint32_t kStageBytes = kATileBytes + kBTileBytes;
  static constexpr int kBoxes = kBlockN / kTensorMapBoxColumns; // per consumer and tile
  static constexpr std::uint32_t kStagingBytes = kBoxes * kBoxBytes;
  static constexpr std::uint32_t kStagingOffset = kStages * kStageBytes;
  static constexpr std::uint32_t kBarriersOffset = kStagingOffset + kConsumers * kStagingBytes;
  static constexpr int kSharedBytes = static_cast<int>(kBarriersOffset) + 2 * kStages * 8 + 1024;
  static_assert(kBlockK == kTensorMapBoxColumns && kBlockN % kTensorMapBoxColumns == 0);
  static_assert(kBlockN == 192 || kBlockN == 256, "the consumers issue wgmma m64n192k16 or m64n256k16");
  static_assert(kSharedBytes <= kSharedLimit);
};

struct Shape {
  int m, n, k;
  int tiles_n, k_blocks;
  int cluster_rows; // row tiles / the cluster size, rounded up: a cluster's CTAs take adjacent row tiles
  int group;        // cluster rows visited together (abt_gemm_group_rows)
  // Row statistics (kStats only): stats[row * stats_ld + tile_n] of the
  // first stats_columns columns, scaled by stats_scale.
  float2 *stats;
  long long stats_ld;
  int stats_columns;
  float stats_scale;
};

// Work item `item` of the grouped order, as the cluster's first row tile
// divided by the cluster size and the column tile: within a group of
// s.group cluster rows, the row changes fastest.
__device__ __forceinline__ void item_coordinates(const Shape &s, int item, int &cluster_row, int &tile_n) {
  const int per_group = s.group * s.tiles_n;
  const int group = item / per_group;
  const int first = group * s.group;
  const int rows = min(s.cluster_rows - first, s.group);
  const int in_group = item - group * per_group;
  cluster_row = first + in_group % rows;
  tile_n = in_group / rows;
}

template <int kStages> __device__ __forceinline__ void next_stage(int &stage, std::uint32_t &phase) {
  if (++stage == kStages) {
    stage = 0;
    phase ^= 1;
  }
}

template <int kBlockN>
__device__ __forceinline__ void mma(float (&d)[kBlockN / 2], std::uint64_t a, std::uint64_t b,
                                    bool accumulate) {
  if constexpr (kBlockN == 256)
    wgmma::mma_m64n256k16_bf16(d, a, b, accumulate);
  else
    wgmma::mma_m64n192k16_bf16(d, a, b, accumulate);
}

// One consumer's 64 x kBlockN fp32 accumulator as bf16 into its staging
// buffer. In wgmma's accumulator layout warp w of the warpgroup holds rows
// 16w + l/4 and 16w + l/4 + 8 (lane l), columns 8j + 2(l % 4) + {0, 1} in
// d[4j..4j+3]. Column 8j is 16-byte chunk j % 8 of box j / 8; the 128-byte
// swizzle keeps chunk q of row r at chunk q ^ (r % 8), which also spreads a
// warp's eight rows over all 32 banks.
template <int kBlockN>
__device__ __forceinline__ void stage_tile(unsigned char *staging, const float (&d)[kBlockN / 2]) {
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32 % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = warp * 16 + lane / 4 + 8 * half;
    unsigned char *line = staging + row * 128 + 4 * (lane % 4);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j)
      *reinterpret_cast<__nv_bfloat162 *>(line + (j / 8) * kBoxBytes + (((j % 8) ^ (row % 8)) << 4)) =
          __floats2bfloat162_rn(d[4 * j + 2 * half], d[4 * j + 2 * half + 1]);
  }
}

// The statistics of one staged 64 x 256 tile: statistics thread t (0-63)
// takes row t, in two sweeps over its 32 chunks of 8 columns in shared
// memory. Per row, of x = scale · z over the columns below s.stats_columns:
// m = max x and sum = Σ 2^(x - m) ((-inf, 0) where no column counts). A
// thread a row and no shuffles: a first version, a warp a row with
// butterfly reductions, waited on shuffle latency and slowed the K = 2048
// GEMM by 14 %. The maximum is taken of the bf16 values (and their
// minimum, for a negative scale): rounding is monotonic, so scaling it
// afterwards gives exactly the maximum of the scaled values.
__device__ __forceinline__ void row_statistics(const Shape &s, const unsigned char *staging, int first_row,
                                               int tile_n, int t) {
  const unsigned char *line = staging + t * 128;
  const int swizzle = t % 8;
  const int first_column = tile_n * 256;
  // Columns of this tile that count: all 256 but in the last counted tile.
  const int counted = min(max(s.stats_columns - first_column, 0), 256);
  const auto chunk_at = [&](int c) { // chunk c: columns 8c..8c+7 of the tile, in box c / 8
    return *reinterpret_cast<const uint4 *>(line + (c / 8) * kBoxBytes + (((c % 8) ^ swizzle) << 4));
  };
  const __nv_bfloat162 lowest = __floats2bfloat162_rn(-INFINITY, -INFINITY);
  const __nv_bfloat162 highest = __floats2bfloat162_rn(INFINITY, INFINITY);
  __nv_bfloat162 top = lowest, bottom = highest;
  for (int c = 0; c < 32; ++c) {
    const uint4 raw = chunk_at(c);
    const auto *pairs = reinterpret_cast<const __nv_bfloat162 *>(&raw);
    const int valid = counted - 8 * c;
    if (valid >= 8) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        top = __hmax2(top, pairs[j]);
        bottom = __hmin2(bottom, pairs[j]);
      }
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const __nv_bfloat162 v = pairs[j];
        const __nv_bfloat162 hi(2 * j < valid ? v.x : lowest.x, 2 * j + 1 < valid ? v.y : lowest.y);
        const __nv_bfloat162 lo(2 * j < valid ? v.x : highest.x, 2 * j + 1 < valid ? v.y : highest.y);
        top = __hmax2(top, hi);
        bottom = __hmin2(bottom, lo);
      }
    }
  }
  const float largest = fmaxf(__bfloat162float(top.x), __bfloat162float(top.y));
  const float smallest = fminf(__bfloat162float(bottom.x), __bfloat162float(bottom.y));
  const float m = counted == 0 ? -INFINITY : fmaxf(largest * s.stats_scale, smallest * s.stats_scale);
  float sum0 = 0.0f, sum1 = 0.0f; // two chains
  for (int c = 0; 8 * c < counted; ++c) {
    const uint4 raw = chunk_at(c);
    const auto *pairs = reinterpret_cast<const __nv_bfloat162 *>(&raw);
    const int valid = counted - 8 * c;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(pairs[j]);
      if (2 * j < valid) sum0 += ex2(fmaf(f.x, s.stats_scale, -m));
      if (2 * j + 1 < valid) sum1 += ex2(fmaf(f.y, s.stats_scale, -m));
    }
  }
  const int row = first_row + t;
  if (row < s.m) s.stats[row * s.stats_ld + tile_n] = make_float2(m, sum0 + sum1);
}

// kCluster CTAs of a cluster take adjacent row tiles of one column tile:
// each loads its own A tile and 1/kCluster of the B tile, which the copy
// engine writes into every CTA of the cluster (multicast), so B crosses
// from L2 once per cluster. A stage of one CTA is then written by all of
// them: its empty barrier counts the consumers of every CTA of the cluster.
template <class C, int kCluster, bool kStats>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    abt_gemm_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                    const __grid_constant__ CUtensorMap c_map, const Shape s) {
  constexpr int kBlockN = C::kBlockN, kStages = C::kStages;
  static_assert(kBlockN % kCluster == 0 && (!kStats || kBlockN == 256));
  extern __shared__ unsigned char raw[];
  const std::uint32_t raw_address = tma::shared_address(raw);
  const std::uint32_t pad = (1024 - raw_address % 1024) % 1024;
  const std::uint32_t base = raw_address + pad;
  const auto a_tile = [&](int stage) { return base + stage * kATileBytes; };
  const auto b_tile = [&](int stage) { return base + kStages * kATileBytes + stage * C::kBTileBytes; };
  const auto full = [&](int stage) { return base + C::kBarriersOffset + 8 * stage; };
  const auto empty = [&](int stage) { return base + C::kBarriersOffset + 8 * (kStages + stage); };
  const auto staging_of = [&](int consumer) { return C::kStagingOffset + consumer * C::kStagingBytes; };
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
  // The cluster's barriers exist before any CTA arrives on or copies to them.
  if constexpr (kCluster > 1)
    tma::cluster_sync();
  else
    __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  const int warp_in_group = static_cast<int>(threadIdx.x / 32 % 4);
  // 56 registers for the statistics warps beside the producer, 224 for
  // the consumers: 128 · 56 + 256 · 224 fit the SM's 65536.
  constexpr int kProducerRegisters = kStats ? 56 : 40, kConsumerRegisters = kStats ? 224 : 232;
  if (warpgroup == 0) {
    tma::release_registers<kProducerRegisters>();
    if (threadIdx.x == 0) {
      tma::prefetch_map(&a_map);
      tma::prefetch_map(&b_map);
      tma::prefetch_map(&c_map);
      int stage = 0;
      std::uint32_t phase = 0;
      for (int item = cluster; item < items; item += clusters) {
        int cluster_row = 0, tile_n = 0;
        item_coordinates(s, item, cluster_row, tile_n);
        const int tile_m = cluster_row * kCluster + rank;
        for (int kb = 0; kb < s.k_blocks; ++kb) {
          tma::barrier_wait(empty(stage), phase ^ 1);
          tma::barrier_arrive_expect_bytes(full(stage), C::kStageBytes);
          tma::load_2d(a_tile(stage), &a_map, full(stage), kb * kBlockK, tile_m * kBlockM);
          if constexpr (kCluster == 1) {
            tma::load_2d(b_tile(stage), &b_map, full(stage), kb * kBlockK, tile_n * kBlockN);
          } else {
            constexpr int kSliceRows = kBlockN / kCluster;
            tma::load_2d_multicast(b_tile(stage) + rank * (C::kBTileBytes / kCluster), &b_map, full(stage),
                                   kb * kBlockK, tile_n * kBlockN + rank * kSliceRows, (1u << kCluster) - 1);
          }
          next_stage<kStages>(stage, phase);
        }
      }
      // The producer's tail: once every stage is empty again, every
      // consumer of the cluster has made its last arrival on this CTA's
      // barriers, and the CTA may end.
      if constexpr (kCluster > 1)
        for (int i = 0; i < kStages; ++i) {
          tma::barrier_wait(empty(stage), phase ^ 1);
          next_stage<kStages>(stage, phase);
        }
    } else if (kStats && warp_in_group > 0 && warp_in_group <= kStatsWarps) {
      for (int item = cluster; item < items; item += clusters) {
        int cluster_row = 0, tile_n = 0;
        item_coordinates(s, item, cluster_row, tile_n);
        const int tile_m = cluster_row * kCluster + rank;
        const bool last = item + clusters >= items;
        for (int consumer = 0; consumer < kConsumers; ++consumer) {
          tma::named_barrier(kStagedBarrier + consumer, kStatsBarrierThreads);
          row_statistics(s, raw + pad + staging_of(consumer), tile_m * kBlockM + consumer * kConsumerRows,
                         tile_n, static_cast<int>(threadIdx.x) - 32);
          // The consumer waits for this before staging its next tile; after
          // its last one it does not wait again.
          if (!last) tma::named_barrier_arrive(kStatsReadBarrier + consumer, kStatsBarrierThreads);
        }
      }
    }
    return;
  } else {
    tma::claim_registers<kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % 128 == 0; // arrives and stores for its warpgroup
    const std::uint32_t staging = base + staging_of(consumer);
    unsigned char *staging_pointer = raw + pad + staging_of(consumer);
    const auto release = [&](int stage) {
      if constexpr (kCluster == 1)
        tma::barrier_arrive(empty(stage));
      else
        for (int cta = 0; cta < kCluster; ++cta) tma::barrier_arrive_cluster(empty(stage), cta);
    };
    int stage = 0;
    std::uint32_t phase = 0;
    float d[kBlockN / 2];
    bool first_tile = true;
    for (int item = cluster; item < items; item += clusters) {
      int cluster_row = 0, tile_n = 0;
      item_coordinates(s, item, cluster_row, tile_n);
      const int tile_m = cluster_row * kCluster + rank;
      int previous = 0;
      for (int kb = 0; kb < s.k_blocks; ++kb) {
        tma::barrier_wait(full(stage), phase);
        const std::uint32_t a = a_tile(stage) + consumer * (kATileBytes / kConsumers);
        const std::uint32_t b = b_tile(stage);
        wgmma::fence();
#pragma unroll
        for (int k = 0; k < kBlockK / 16; ++k)
          mma<kBlockN>(d, wgmma::swizzle128_descriptor(a + 32 * k), wgmma::swizzle128_descriptor(b + 32 * k),
                       kb > 0 || k > 0);
        wgmma::commit_group();
        // The group before this one has finished reading its stage.
        wgmma::wait_group<1>();
        if (kb > 0 && leader) release(previous);
        previous = stage;
        next_stage<kStages>(stage, phase);
      }
      wgmma::wait_group<0>();
      if (leader) release(previous);
      // The last tile's stores (and statistics) have read the staging
      // buffer before it is written again.
      if (leader) tma::store_wait_read<0>();
      if (kStats && !first_tile)
        tma::named_barrier(kStatsReadBarrier + consumer, kStatsBarrierThreads);
      else
        tma::named_barrier(kConsumerBarrier + consumer, 128);
      first_tile = false;
      stage_tile<kBlockN>(staging_pointer, d);
      wgmma::fence_shared_for_async_proxy();
      tma::named_barrier(kConsumerBarrier + consumer, 128);
      if constexpr (kStats) tma::named_barrier_arrive(kStagedBarrier + consumer, kStatsBarrierThreads);
      if (leader) {
        for (int box = 0; box < C::kBoxes; ++box)
          tma::store_2d(&c_map, staging + box * kBoxBytes, tile_n * kBlockN + box * kTensorMapBoxColumns,
                        tile_m * kBlockM + consumer * kConsumerRows);
        tma::store_commit();
      }
    }
    if (leader) tma::store_wait<0>();
  }
}

// Raises the kernel's shared-memory limit, once per process (it does not
// change between launches).
template <class C, int kCluster, bool kStats> void configure() {
  static const bool configured = [] {
    CUDA_CHECK(cudaFuncSetAttribute(abt_gemm_kernel<C, kCluster, kStats>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSharedBytes));
    return true;
  }();
  (void)configured;
}

// The persistent grid: as many whole clusters as fit on the GPU at once
// (each CTA fills an SM), within `ctas`. Counted once per process, on one
// GPU, as the row kernel's resident clusters are.
template <class C, int kCluster> int resident_ctas(int ctas) {
  configure<C, kCluster, false>();
  if constexpr (kCluster == 1) {
    return ctas;
  } else {
    static const int clusters = [] {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(kCluster);
      config.blockDim = dim3(kThreads);
      config.dynamicSmemBytes = C::kSharedBytes;
      int fit = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, abt_gemm_kernel<C, kCluster, false>, &config));
      if (fit < 1) throw std::runtime_error("abt_gemm: no cluster fits on this GPU");
      return fit;
    }();
    return std::min(ctas, clusters * kCluster) / kCluster * kCluster;
  }
}

template <class C, int kCluster> void launch(const AbtGemm &g, int ctas, cudaStream_t stream) {
  const CUtensorMap a_map = bf16_tensor_map(g.a, g.m, g.k, g.lda, kBlockM);
  const CUtensorMap b_map =
      bf16_tensor_map(g.b, g.b_rows > 0 ? g.b_rows : g.n, g.k, g.ldb, C::kBlockN / kCluster);
  const CUtensorMap c_map = bf16_tensor_map(g.c, g.m, g.n, g.ldc, kConsumerRows);
  Shape s{};
  s.m = static_cast<int>(g.m);
  s.n = static_cast<int>(g.n);
  s.k = static_cast<int>(g.k);
  s.tiles_n = (s.n + C::kBlockN - 1) / C::kBlockN;
  s.k_blocks = (s.k + kBlockK - 1) / kBlockK;
  const int tiles_m = (s.m + kBlockM - 1) / kBlockM;
  s.cluster_rows = (tiles_m + kCluster - 1) / kCluster;
  const int group_tiles = g.group_rows > 0 ? g.group_rows : abt_gemm_group_rows(g.k);
  const int groups = (s.cluster_rows * kCluster + group_tiles - 1) / group_tiles;
  s.group = (s.cluster_rows + groups - 1) / groups; // balanced: the last group is not a sliver
  s.stats = g.row_stats;
  s.stats_ld = g.stats_ld;
  s.stats_columns = static_cast<int>(g.stats_columns);
  s.stats_scale = g.stats_scale;
  const long long items = static_cast<long long>(s.cluster_rows) * s.tiles_n;
  if (items > std::numeric_limits<int>::max()) throw std::invalid_argument("abt_gemm: too many tiles");
  const int grid = static_cast<int>(std::min<long long>(resident_ctas<C, kCluster>(ctas), items * kCluster));
  if (grid < kCluster) throw std::invalid_argument("abt_gemm: fewer CTAs than one cluster");
  if constexpr (C::kBlockN == 256) {
    if (g.row_stats != nullptr) {
      configure<C, kCluster, true>();
      abt_gemm_kernel<C, kCluster, true><<<grid, kThreads, C::kSharedBytes, stream>>>(a_map, b_map, c_map, s);
      CUDA_CHECK_LAUNCH();
      return;
    }
  }
  abt_gemm_kernel<C, kCluster, false><<<grid, kThreads, C::kSharedBytes, stream>>>(a_map, b_map, c_map, s);
  CUDA_CHECK_LAUNCH();
}

using N192S4 = Config<192, 4>;
using N256S3 = Config<256, 3>;

// Calls f.template operator()<Config, cluster>() for the tile and cluster.
template <class F> decltype(auto) dispatch(AbtTile tile, int cluster, F &&f) {
  const auto with = [&]<class C>() -> decltype(auto) {
    return cluster == 2 ? f.template operator()<C, 2>() : f.template operator()<C, 1>();
  };
  switch (tile) {
  case AbtTile::n192_stages4:
    return with.template operator()<N192S4>();
  case AbtTile::n256_stages3:
    return with.template operator()<N256S3>();
  }
  throw std::invalid_argument("abt_gemm: unknown tile");
}

bool fits_int(std::int64_t x) {
  return x > 0 && x <= std::numeric_limits<int>::max();
}

} // namespace

bool abt_gemm_supported(const AbtGemm &g) {
  // TMA stores whole 16-byte units of a row: n must fill them.
  return fits_int(g.m) && fits_int(g.n) && fits_int(g.k) && g.lda >= g.k && g.ldb >= g.k && g.ldc >= g.n &&
         g.n % 8 == 0 && g.b_rows >= 0 && g.b_rows <= g.n && can_map_bf16(g.a, g.lda) &&
         can_map_bf16(g.b, g.ldb) && can_map_bf16(g.c, g.ldc) && (g.cluster == 1 || g.cluster == 2) &&
         (g.row_stats == nullptr || (g.tile == AbtTile::n256_stages3 && g.stats_columns > 0 &&
                                     g.stats_columns <= g.n && g.stats_ld >= abt_gemm_column_tiles(g.n)));
}

int abt_gemm_group_rows(std::int64_t k) {
  constexpr std::int64_t kGroupBytes = 24ll << 20; // half the H200's 50 MB L2
  const std::int64_t row_tile_bytes = std::max<std::int64_t>(k, 1) * kBlockM * 2;
  return static_cast<int>(std::clamp<std::int64_t>(kGroupBytes / row_tile_bytes, 2, 1 << 20));
}

int abt_gemm_resident_ctas(AbtTile tile, int cluster, int ctas) {
  return dispatch(tile, cluster, [&]<class C, int kCluster>() { return resident_ctas<C, kCluster>(ctas); });
}

void abt_gemm(const AbtGemm &g, int ctas, cudaStream_t stream) {
  if (!abt_gemm_supported(g))
    throw std::invalid_argument("abt_gemm: unsupported operands (" + std::to_string(g.m) + "x" +
                                std::to_string(g.n) + "x" + std::to_string(g.k) + ", lda " +
                                std::to_string(g.lda) + ", ldb " + std::to_string(g.ldb) + ", ldc " +
                                std::to_string(g.ldc) + ", cluster " + std::to_string(g.cluster) + ")");
  dispatch(g.tile, g.cluster, [&]<class C, int kCluster>() { launch<C, kCluster>(g, ctas, stream); });
}

} // namespace kibench::gpu::gemm
