// Hopper's bulk tensor copies (TMA) and the shared-memory barriers they
// complete on, as device functions (sm_90a PTX).
//
// A copy of a box of a global tensor into shared memory is issued by one
// thread and counts its bytes against an mbarrier's transaction count; the
// barrier's phase completes when the expected bytes have landed and the
// expected arrivals have been made. Waiting is by phase parity: a fresh
// barrier is in phase 0, so a wait for parity 1 returns at once (the
// producer side's first lap) and a wait for parity 0 blocks until the
// first phase completes.
#pragma once

#include <cstdint>

namespace kibench::gpu::tma {

__device__ __forceinline__ std::uint32_t shared_address(const void *pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ __forceinline__ void barrier_init(std::uint32_t barrier, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// Makes initialized barriers visible to the async proxy (the copy engine)
// and the cluster; the CTA synchronizes after it.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ bool barrier_try_wait(std::uint32_t barrier, std::uint32_t parity) {
  std::uint32_t done = 0;
  asm volatile("{\n"
               ".reg .pred p;\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n"
               "}\n"
               : "=r"(done)
               : "r"(barrier), "r"(parity)
               : "memory");
  return done != 0;
}

// Blocks until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(std::uint32_t barrier, std::uint32_t parity) {
  while (!barrier_try_wait(barrier, parity)) {
  }
}

__device__ __forceinline__ void barrier_arrive(std::uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// One arrival that also expects `bytes` more of copies to land.
__device__ __forceinline__ void barrier_arrive_expect_bytes(std::uint32_t barrier, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes)
               : "memory");
}

// Copies the box at (column, row) of the 2-D tensor `map` describes into
// shared memory at `destination`, counted on `barrier`. Out-of-range parts
// of the box are filled with zeros and still counted.
__device__ __forceinline__ void load_2d(std::uint32_t destination, const void *map, std::uint32_t barrier,
                                        int column, int row) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
               "%4}], [%2];\n" ::"r"(destination),
               "l"(reinterpret_cast<std::uint64_t>(map)), "r"(barrier), "r"(column), "r"(row)
               : "memory");
}

// The same box into shared memory at `destination` in every CTA of the
// cluster that `cta_mask` names, each copy counted on the barrier at
// `barrier` in its own CTA.
__device__ __forceinline__ void load_2d_multicast(std::uint32_t destination, const void *map,
                                                  std::uint32_t barrier, int column, int row,
                                                  std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(destination),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(barrier), "r"(column), "r"(row), "h"(cta_mask)
      : "memory");
}

// This CTA's rank in its cluster.
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t rank = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster waits for all the others; what
// each wrote to shared memory before is visible to the others after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}

// One arrival on the barrier at `barrier` (an address in this CTA's shared
// memory) in cluster CTA `cta`, which may be this one. Default (CTA-scope
// release) semantics: what it signals is that this warpgroup's wgmma reads
// of a stage are complete, and a cluster-scope release made every arrival
// wait for a memory barrier (MEMBAR.ALL.GPU in SASS), which halved the
// GEMM's speed.
__device__ __forceinline__ void barrier_arrive_cluster(std::uint32_t barrier, std::uint32_t cta) {
  asm volatile("{\n"
               ".reg .b32 remote;\n"
               "mapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
               "}\n" ::"r"(barrier),
               "r"(cta)
               : "memory");
}

// Copies the box at (column, row) of the 2-D tensor `map` describes from
// shared memory at `source` to global memory (out-of-range parts are not
// written), in this thread's current bulk group.
__device__ __forceinline__ void store_2d(const void *map, std::uint32_t source, int column, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(source), "r"(column), "r"(row)
               : "memory");
}

// Closes this thread's bulk stores since the last commit into one group.
__device__ __forceinline__ void store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most `Pending` of this thread's store groups still read
// their shared memory (which may then be written again).
template <int Pending> __device__ __forceinline__ void store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}

// Waits until at most `Pending` of this thread's store groups are
// incomplete (their writes done).
template <int Pending> __device__ __forceinline__ void store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// A barrier among `threads` threads (a multiple of 32) of the CTA, by id
// (1-15; 0 is __syncthreads).
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrives on named barrier `id` without waiting: `threads` counts these
// arrivals and the bar.sync of the threads that wait on it.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Fetches a tensor map into the constant cache before its first use.
__device__ __forceinline__ void prefetch_map(const void *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// Warp-specialized kernels hand registers from the copy warps to the math
// warps: every warp of a warpgroup executes the same one of these.
template <int Registers> __device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers> __device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

} // namespace kibench::gpu::tma
