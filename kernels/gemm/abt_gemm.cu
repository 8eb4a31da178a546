// abt_gemm.hpp says what this GEMM is and how its warps divide the work.
// Shared memory, 1024-byte aligned for the 128-byte swizzle:
//   a[4]        128 x 64 bf16 tiles of A (16 KiB each)
//   b[4]        192 x 64 bf16 tiles of B (24 KiB each)
//   staging[2]  each consumer's 64 x 192 bf16 output, as three 64 x 64
//               boxes in the swizzled layout the TMA store reads (24 KiB each)
//   full[4], empty[4]  mbarriers: "the stage's copies have landed" (one
//   producer arrival + 40 KiB of transactions) and "both consumer
//   warpgroups are done reading it" (two arrivals)
// 208 KiB in all, one CTA per SM.
//
// Version 2. Version 1 (128 x 256 tiles, the accumulators stored straight
// to global memory) ran 10-20 % behind cuBLASLt on the seed's logit shapes
// (docs/perf.md): both consumers stored their tile while the tensor cores
// waited, about a tenth of a K = 2048 tile. Here a consumer writes its tile
// to shared memory and hands it to the TMA engine, which stores it while
// the next tile's products run; 192 columns leave room for that buffer
// beside four stages, and divide the seed's vocabulary (128256 = 668 · 192).
// Clusters of two share each B tile by multicast: L2 ran at 85 % of its
// peak with one CTA alone (Nsight Compute), and a third less passes
// through it. Measured on the H200: 4-6 % behind cuBLASLt's own kernels on
// the seed's logit shapes, bit-identical to them.
#include "gemm/abt_gemm.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <cuda.h>
#include <cuda_bf16.h>

#include "cuda/cuda_check.hpp"
#include "cuda/tensor_map.hpp"
#include "cuda/tma.cuh"
#include "cuda/wgmma.cuh"

namespace kibench::gpu::gemm {

namespace {

constexpr int kBlockM = 128, kBlockN = 192, kBlockK = 64;
constexpr int kStages = 4;
constexpr int kConsumers = 2; // warpgroups, 64 rows of the tile each
constexpr int kConsumerRows = kBlockM / kConsumers;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kGroupRows = 16; // row tiles visited together
constexpr std::uint32_t kATileBytes = kBlockM * kBlockK * 2;
constexpr std::uint32_t kBTileBytes = kBlockN * kBlockK * 2;
constexpr std::uint32_t kStageBytes = kATileBytes + kBTileBytes;
constexpr int kStoreBoxes = kBlockN / kTensorMapBoxColumns;      // 64 x 64 boxes per consumer
constexpr std::uint32_t kBoxBytes = kConsumerRows * 128;         // 64 rows of 128 bytes
constexpr std::uint32_t kStagingBytes = kStoreBoxes * kBoxBytes; // one consumer's tile
constexpr std::uint32_t kStagingOffset = kStages * kStageBytes;
constexpr std::uint32_t kBarriersOffset = kStagingOffset + kConsumers * kStagingBytes;
constexpr int kSharedBytes = static_cast<int>(kBarriersOffset) + 2 * kStages * 8 + 1024;
static_assert(kBlockK == kTensorMapBoxColumns && kBlockN % kTensorMapBoxColumns == 0);
static_assert(kBlockN == 192, "the consumers issue wgmma m64n192k16");

struct Shape {
  int m, n, k;
  int tiles_n, k_blocks;
  int cluster_rows; // row tiles / the cluster size, rounded up: a cluster's CTAs take adjacent row tiles
};

// Work item `item` of the grouped order, as the cluster's first row tile
// divided by the cluster size and the column tile: within a group of
// kGroupRows row tiles, the row tile changes fastest.
template <int kCluster>
__device__ __forceinline__ void item_coordinates(const Shape &s, int item, int &cluster_row, int &tile_n) {
  constexpr int kGroup = kGroupRows / kCluster;
  const int per_group = kGroup * s.tiles_n;
  const int group = item / per_group;
  const int first = group * kGroup;
  const int rows = min(s.cluster_rows - first, kGroup);
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

// One consumer's 64 x 192 fp32 accumulator as bf16 into its staging buffer.
// In wgmma's accumulator layout warp w of the warpgroup holds rows
// 16w + l/4 and 16w + l/4 + 8 (lane l), columns 8j + 2(l % 4) + {0, 1} in
// d[4j..4j+3]. Column 8j is 16-byte chunk j % 8 of box j / 8; the 128-byte
// swizzle keeps chunk q of row r at chunk q ^ (r % 8), which also spreads a
// warp's eight rows over all 32 banks.
__device__ __forceinline__ void stage_tile(unsigned char *staging, const float (&d)[96]) {
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

// kCluster CTAs of a cluster take adjacent row tiles of one column tile:
// each loads its own A tile and 1/kCluster of the B tile, which the copy
// engine writes into every CTA of the cluster (multicast), so B crosses
// from L2 once per cluster. A stage of one CTA is then written by all of
// them: its empty barrier counts the consumers of every CTA of the cluster.
template <int kCluster>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads, 1)
    abt_gemm_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                    const __grid_constant__ CUtensorMap c_map, const Shape s) {
  static_assert(kGroupRows % kCluster == 0 && kBlockN % kCluster == 0);
  extern __shared__ unsigned char raw[];
  const std::uint32_t raw_address = tma::shared_address(raw);
  const std::uint32_t pad = (1024 - raw_address % 1024) % 1024;
  const std::uint32_t base = raw_address + pad;
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
  // The cluster's barriers exist before any CTA arrives on or copies to them.
  if constexpr (kCluster > 1)
    tma::cluster_sync();
  else
    __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x / 128);
  if (warpgroup == 0) {
    tma::release_registers<40>();
    if (threadIdx.x == 0) {
      tma::prefetch_map(&a_map);
      tma::prefetch_map(&b_map);
      tma::prefetch_map(&c_map);
      int stage = 0;
      std::uint32_t phase = 0;
      for (int item = cluster; item < items; item += clusters) {
        int cluster_row = 0, tile_n = 0;
        item_coordinates<kCluster>(s, item, cluster_row, tile_n);
        const int tile_m = cluster_row * kCluster + rank;
        for (int kb = 0; kb < s.k_blocks; ++kb) {
          tma::barrier_wait(empty(stage), phase ^ 1);
          tma::barrier_arrive_expect_bytes(full(stage), kStageBytes);
          tma::load_2d(a_tile(stage), &a_map, full(stage), kb * kBlockK, tile_m * kBlockM);
          if constexpr (kCluster == 1) {
            tma::load_2d(b_tile(stage), &b_map, full(stage), kb * kBlockK, tile_n * kBlockN);
          } else {
            constexpr int kSliceRows = kBlockN / kCluster;
            tma::load_2d_multicast(b_tile(stage) + rank * (kBTileBytes / kCluster), &b_map, full(stage),
                                   kb * kBlockK, tile_n * kBlockN + rank * kSliceRows, (1u << kCluster) - 1);
          }
          next_stage(stage, phase);
        }
      }
      // The producer's tail: once every stage is empty again, every
      // consumer of the cluster has made its last arrival on this CTA's
      // barriers, and the CTA may end.
      if constexpr (kCluster > 1)
        for (int i = 0; i < kStages; ++i) {
          tma::barrier_wait(empty(stage), phase ^ 1);
          next_stage(stage, phase);
        }
    }
    return;
  } else {
    tma::claim_registers<232>();
    const int consumer = warpgroup - 1;
    const bool leader = threadIdx.x % 128 == 0; // arrives and stores for its warpgroup
    const std::uint32_t staging = base + kStagingOffset + consumer * kStagingBytes;
    unsigned char *staging_pointer = raw + pad + kStagingOffset + consumer * kStagingBytes;
    const auto release = [&](int stage) {
      if constexpr (kCluster == 1)
        tma::barrier_arrive(empty(stage));
      else
        for (int cta = 0; cta < kCluster; ++cta) tma::barrier_arrive_cluster(empty(stage), cta);
    };
    int stage = 0;
    std::uint32_t phase = 0;
    float d[96];
    for (int item = cluster; item < items; item += clusters) {
      int cluster_row = 0, tile_n = 0;
      item_coordinates<kCluster>(s, item, cluster_row, tile_n);
      const int tile_m = cluster_row * kCluster + rank;
      int previous = 0;
      for (int kb = 0; kb < s.k_blocks; ++kb) {
        tma::barrier_wait(full(stage), phase);
        const std::uint32_t a = a_tile(stage) + consumer * (kATileBytes / kConsumers);
        const std::uint32_t b = b_tile(stage);
        wgmma::fence();
#pragma unroll
        for (int k = 0; k < kBlockK / 16; ++k)
          wgmma::mma_m64n192k16_bf16(d, wgmma::swizzle128_descriptor(a + 32 * k),
                                     wgmma::swizzle128_descriptor(b + 32 * k), kb > 0 || k > 0);
        wgmma::commit_group();
        // The group before this one has finished reading its stage.
        wgmma::wait_group<1>();
        if (kb > 0 && leader) release(previous);
        previous = stage;
        next_stage(stage, phase);
      }
      wgmma::wait_group<0>();
      if (leader) release(previous);
      // The last tile's stores have read the staging buffer before it is
      // written again.
      if (leader) tma::store_wait_read<0>();
      tma::named_barrier(1 + consumer, 128);
      stage_tile(staging_pointer, d);
      wgmma::fence_shared_for_async_proxy();
      tma::named_barrier(1 + consumer, 128);
      if (leader) {
        for (int box = 0; box < kStoreBoxes; ++box)
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
template <int kCluster> void configure() {
  static const bool configured = [] {
    CUDA_CHECK(cudaFuncSetAttribute(abt_gemm_kernel<kCluster>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSharedBytes));
    return true;
  }();
  (void)configured;
}

// The persistent grid: as many whole clusters as fit on the GPU at once
// (each CTA fills an SM), within `ctas`. Counted once per process, on one
// GPU, as the row kernel's resident clusters are.
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
      CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, abt_gemm_kernel<kCluster>, &config));
      if (fit < 1) throw std::runtime_error("abt_gemm: no cluster fits on this GPU");
      return fit;
    }();
    return std::min(ctas, clusters * kCluster) / kCluster * kCluster;
  }
}

template <int kCluster>
void launch(const CUtensorMap &a_map, const CUtensorMap &b_map, const CUtensorMap &c_map, const Shape &s,
            int ctas, cudaStream_t stream) {
  const long long items = static_cast<long long>(s.cluster_rows) * s.tiles_n;
  const int grid = static_cast<int>(std::min<long long>(resident_ctas<kCluster>(ctas), items * kCluster));
  if (grid < kCluster) throw std::invalid_argument("abt_gemm: fewer CTAs than one cluster");
  abt_gemm_kernel<kCluster><<<grid, kThreads, kSharedBytes, stream>>>(a_map, b_map, c_map, s);
  CUDA_CHECK_LAUNCH();
}

bool fits_int(std::int64_t x) {
  return x > 0 && x <= std::numeric_limits<int>::max();
}

} // namespace

bool abt_gemm_supported(const AbtGemm &g) {
  // TMA stores whole 16-byte units of a row: n must fill them.
  return fits_int(g.m) && fits_int(g.n) && fits_int(g.k) && g.lda >= g.k && g.ldb >= g.k && g.ldc >= g.n &&
         g.n % 8 == 0 && can_map_bf16(g.a, g.lda) && can_map_bf16(g.b, g.ldb) && can_map_bf16(g.c, g.ldc) &&
         (g.cluster == 1 || g.cluster == 2);
}

int abt_gemm_resident_ctas(int cluster, int ctas) {
  return cluster == 2 ? resident_ctas<2>(ctas) : resident_ctas<1>(ctas);
}

void abt_gemm(const AbtGemm &g, int ctas, cudaStream_t stream) {
  if (!abt_gemm_supported(g))
    throw std::invalid_argument("abt_gemm: unsupported operands (" + std::to_string(g.m) + "x" +
                                std::to_string(g.n) + "x" + std::to_string(g.k) + ", lda " +
                                std::to_string(g.lda) + ", ldb " + std::to_string(g.ldb) + ", ldc " +
                                std::to_string(g.ldc) + ", cluster " + std::to_string(g.cluster) + ")");
  const CUtensorMap a_map = bf16_tensor_map(g.a, g.m, g.k, g.lda, kBlockM);
  const CUtensorMap b_map = bf16_tensor_map(g.b, g.n, g.k, g.ldb, kBlockN / g.cluster);
  const CUtensorMap c_map = bf16_tensor_map(g.c, g.m, g.n, g.ldc, kConsumerRows);
  Shape s{};
  s.m = static_cast<int>(g.m);
  s.n = static_cast<int>(g.n);
  s.k = static_cast<int>(g.k);
  s.tiles_n = (s.n + kBlockN - 1) / kBlockN;
  s.k_blocks = (s.k + kBlockK - 1) / kBlockK;
  const int tiles_m = (s.m + kBlockM - 1) / kBlockM;
  s.cluster_rows = (tiles_m + g.cluster - 1) / g.cluster;
  if (static_cast<long long>(s.cluster_rows) * s.tiles_n > std::numeric_limits<int>::max())
    throw std::invalid_argument("abt_gemm: too many tiles");
  if (g.cluster == 2)
    launch<2>(a_map, b_map, c_map, s, ctas, stream);
  else
    launch<1>(a_map, b_map, c_map, s, ctas, stream);
}

} // namespace kibench::gpu::gemm
