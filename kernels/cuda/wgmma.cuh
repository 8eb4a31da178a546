// Hopper's warpgroup matrix multiply (wgmma, sm_90a) as device functions:
// shared-memory matrix descriptors and the m64n256k16 bf16 -> fp32 form,
// with the fences and group waits that order it against other code (and,
// at the end, an m64n128k16 form with both operands MN-major).
//
// A warpgroup (4 consecutive warps, the first a multiple of 4) issues
// wgmma.mma_async together; D[64 x 256] += A[64 x 16] · B[256 x 16]ᵀ with
// both operands read from shared memory in the K-major, 128-byte swizzled
// layout: rows of 64 bf16 (128 bytes), groups of 8 rows 1024 bytes apart,
// each group's 16-byte chunks XOR-permuted by the row's index within it.
// A tile in that layout starts 1024-byte aligned; stepping 16 along K
// inside the 64-wide row is +32 bytes on the descriptor's start address.
// The accumulator lives in the 128 registers d[0..127] of each thread.
#pragma once

#include <cstdint>

namespace kibench::gpu::wgmma {

// The descriptor of a K-major operand tile at shared-memory byte address
// `address` (from __cvta_generic_to_shared), 128-byte swizzle.
__device__ __forceinline__ std::uint64_t swizzle128_descriptor(std::uint32_t address) {
  constexpr std::uint64_t kLeadingBytes = 16;  // unused by swizzled K-major layouts; 1 by convention
  constexpr std::uint64_t kStrideBytes = 1024; // between groups of 8 rows
  constexpr std::uint64_t kSwizzle128 = 1;     // layout type in bits 62-63
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) | ((kLeadingBytes >> 4) << 16) |
         ((kStrideBytes >> 4) << 32) | (kSwizzle128 << 62);
}

// Orders earlier register and shared-memory accesses before the next
// wgmma.mma_async of this warpgroup.
__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// Closes the wgmma.mma_async issued since the last commit into one group.
__device__ __forceinline__ void commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `Pending` committed groups are still in flight.
template <int Pending> __device__ __forceinline__ void wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Shared memory written by ordinary stores, read next by the tensor cores
// (the async proxy): each writing thread fences before the barrier.
__device__ __forceinline__ void fence_shared_for_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// d = (accumulate ? d : 0) + A · Bᵀ over one K step of 16.
__device__ __forceinline__ void mma_m64n256k16_bf16(float (&d)[128], std::uint64_t a_descriptor,
                                                    std::uint64_t b_descriptor, bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},"
      " %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),
        "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
        "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
        "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),
        "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
        "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),
        "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]),
        "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
        "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]),
        "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(a_descriptor), "l"(b_descriptor), "r"(static_cast<int>(accumulate)));
}

// The same for N = 192: D[64 x 192] in d[0..95].
__device__ __forceinline__ void mma_m64n192k16_bf16(float (&d)[96], std::uint64_t a_descriptor,
                                                    std::uint64_t b_descriptor, bool accumulate) {
  asm volatile("{\n"
               ".reg .pred p;\n"
               "setp.ne.b32 p, %98, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95},"
               " %96, %97, p, 1, 1, 0, 0;\n"
               "}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                 "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
                 "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
                 "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
                 "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                 "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
                 "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
                 "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
                 "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
                 "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
                 "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
                 "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
               : "l"(a_descriptor), "l"(b_descriptor), "r"(static_cast<int>(accumulate)));
}

// Both operands MN-major: A stored with M contiguous, B with N contiguous
// (the layout of Gᵀ·x where G and x are row-major [k, m] and [k, n]).
// PTX ISA 9.7.15.5.1.2 (Shared Memory Matrix Layout): the 128-byte swizzle
// atom of an MN-major bf16 operand is 64 elements along MN (128 bytes) by
// 8 along K, rows 128 bytes apart, in canonical form (16-byte units, T = 8
// elements) ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)). So the leading byte
// offset is the distance between successive 64-element groups along MN and
// the stride byte offset the distance between successive groups of 8 K
// rows; CUTLASS's make_gmma_desc<Major::MN> fills the two fields so.
// A TMA box of 64 MN elements by `rows` K rows with the 128-byte swizzle is
// that layout with SBO = 1024 and, for boxes laid one after another along
// MN, LBO = the box's bytes. Stepping K by 16 inside such a box is
// +16 · 128 = 2048 bytes on the start address (a multiple of the 1024-byte
// pattern, so the base offset stays 0).
__device__ __forceinline__ std::uint64_t swizzle128_mn_major_descriptor(std::uint32_t address,
                                                                        std::uint32_t leading_bytes) {
  constexpr std::uint64_t kStrideBytes = 1024; // between groups of 8 K rows
  constexpr std::uint64_t kSwizzle128 = 1;
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>((leading_bytes & 0x3FFFF) >> 4) << 16) | ((kStrideBytes >> 4) << 32) |
         (kSwizzle128 << 62);
}

// d = (accumulate ? d : 0) + A · B over one K step of 16, D[64 x 128] in
// d[0..63], A[64 x 16] M-major and B[16 x 128] N-major: the instruction's
// last two immediates (imm-trans-a, imm-trans-b) are 1, which PTX allows
// for .f16/.bf16 operands read through descriptors only.
__device__ __forceinline__ void mma_m64n128k16_bf16_mn_major(float (&d)[64], std::uint64_t a_descriptor,
                                                             std::uint64_t b_descriptor, bool accumulate) {
  asm volatile("{\n"
               ".reg .pred p;\n"
               "setp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63},"
               " %64, %65, p, 1, 1, 1, 1;\n"
               "}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                 "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
                 "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
                 "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
                 "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                 "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
                 "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
                 "+f"(d[63])
               : "l"(a_descriptor), "l"(b_descriptor), "r"(static_cast<int>(accumulate)));
}

} // namespace kibench::gpu::wgmma
