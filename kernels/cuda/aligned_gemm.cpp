#include "kernels/cuda/aligned_gemm.hpp"

#include <stdexcept>

namespace kibench::gpu {

namespace {

enum class Dim { m, n, k };

const void *advance(const void *pointer, std::int64_t elements, ElementType type) {
  return static_cast<const char *>(pointer) + elements * static_cast<std::int64_t>(element_bytes(type));
}
void *advance(void *pointer, std::int64_t elements, ElementType type) {
  return static_cast<char *>(pointer) + elements * static_cast<std::int64_t>(element_bytes(type));
}

bool contiguous(const RowMajorGemm &g, Dim dim) {
  switch (dim) {
  case Dim::m:
    return g.transpose_a;
  case Dim::n:
    return true;
  case Dim::k:
    return !g.transpose_a || g.transpose_b;
  }
  return false;
}

std::int64_t &extent(RowMajorGemm &g, Dim dim) {
  return dim == Dim::m ? g.m : dim == Dim::n ? g.n : g.k;
}

// The GEMM over [from, from + count) of `dim`, the others whole.
RowMajorGemm part(RowMajorGemm g, Dim dim, std::int64_t from, std::int64_t count) {
  const ElementType in = g.input_type, out = g.output_type;
  switch (dim) {
  case Dim::m: // rows of op(A) and of C
    g.a = g.transpose_a ? advance(g.a, from, in) : advance(g.a, from * g.lda, in);
    g.c = advance(g.c, from * g.ldc, out);
    break;
  case Dim::n: // columns of op(B) and of C
    g.b = g.transpose_b ? advance(g.b, from * g.ldb, in) : advance(g.b, from, in);
    g.c = advance(g.c, from, out);
    if (g.bias != nullptr) g.bias = advance(g.bias, from, out);
    break;
  case Dim::k: // columns of op(A), rows of op(B); later parts add to C
    g.a = g.transpose_a ? advance(g.a, from * g.lda, in) : advance(g.a, from, in);
    g.b = g.transpose_b ? advance(g.b, from, in) : advance(g.b, from * g.ldb, in);
    if (from != 0) {
      g.beta = 1.0;
      g.bias = nullptr; // added once, by the first part
    }
    break;
  }
  extent(g, dim) = count;
  return g;
}

void run_cut(CublasLt &blas, const RowMajorGemm &g, int next_dim, cudaStream_t stream) {
  for (int d = next_dim; d < 3; ++d) {
    const Dim dim = static_cast<Dim>(d);
    RowMajorGemm whole = g;
    const std::int64_t e = extent(whole, dim); // (extent() hands out a reference)
    const std::int64_t e8 = e - e % 8;
    if (!contiguous(g, dim) || e % 8 == 0 || e8 == 0) continue;
    if (dim == Dim::k && (g.device_alpha != nullptr || g.device_beta != nullptr))
      throw std::invalid_argument("matmul_aligned: a cut along k needs host alpha and beta");
    run_cut(blas, part(g, dim, 0, e8), d + 1, stream);
    // The thin rest: its extent along `dim` stays unaligned, so only the
    // later dimensions are cut further.
    run_cut(blas, part(g, dim, e8, e - e8), d + 1, stream);
    return;
  }
  blas.matmul(g, stream);
}

} // namespace

void matmul_aligned(CublasLt &blas, const RowMajorGemm &gemm, cudaStream_t stream) {
  // part() advances pointers by input_type's element size and knows no
  // scale vectors; FP8 operands are padded by their owner instead.
  if (gemm.fp8.on())
    throw std::invalid_argument("matmul_aligned: FP8 GEMMs are padded to whole 16-byte rows, never cut");
  run_cut(blas, with_dense_strides(gemm), 0, stream);
}

} // namespace kibench::gpu
