#include "cuda/cublaslt.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "cuda/cuda_check.hpp"

namespace kibench::gpu {

namespace {

cudaDataType_t cuda_type(ElementType type) {
  switch (type) {
  case ElementType::bf16:
    return CUDA_R_16BF;
  case ElementType::fp32:
    return CUDA_R_32F;
  case ElementType::fp64:
    return CUDA_R_64F;
  }
  throw std::logic_error("unknown ElementType");
}

// cuBLASLt picks vectorized kernels by pointer alignment; sub-matrix views
// (token chunks) may be less aligned than a fresh allocation.
int alignment_of(const void *pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address == 0) return 256;
  return static_cast<int>(std::min<std::uintptr_t>(256, address & (~address + 1)));
}

void validate(const RowMajorGemm &g) {
  const bool bf16_in = g.input_type == ElementType::bf16;
  const bool fp64_in = g.input_type == ElementType::fp64;
  if (!(bf16_in && (g.output_type == ElementType::bf16 || g.output_type == ElementType::fp32)) &&
      !(fp64_in && g.output_type == ElementType::fp64))
    throw std::invalid_argument(
        "RowMajorGemm: supported types are bf16 inputs with bf16/fp32 output, or fp64");
  if (g.m <= 0 || g.n <= 0 || g.k <= 0)
    throw std::invalid_argument(fmt::format("RowMajorGemm: empty shape m={} n={} k={}", g.m, g.n, g.k));
  if (g.a == nullptr || g.b == nullptr || g.c == nullptr)
    throw std::invalid_argument("RowMajorGemm: null operand");
}

// Dense row strides when the caller left them at 0.
RowMajorGemm with_dense_strides(RowMajorGemm g) {
  if (g.lda == 0) g.lda = g.transpose_a ? g.m : g.k;
  if (g.ldb == 0) g.ldb = g.transpose_b ? g.k : g.n;
  if (g.ldc == 0) g.ldc = g.n;
  return g;
}

template <class Handle, cublasStatus_t (*Destroy)(Handle)> struct LtDeleter {
  void operator()(Handle handle) const {
    if (handle != nullptr && Destroy(handle) != CUBLAS_STATUS_SUCCESS)
      std::fputs("kibench: destroying a cuBLASLt descriptor failed\n", stderr);
  }
};

using MatmulDesc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>,
                                   LtDeleter<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>>;
using Layout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>,
                               LtDeleter<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>>;
using Preference = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                                   LtDeleter<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>>;

Layout make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                          static_cast<std::uint64_t>(cols), ld));
  return Layout(layout);
}

} // namespace

RowMajorGemm gemm_abt(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c) {
  RowMajorGemm g;
  g.m = m, g.n = n, g.k = k, g.a = a, g.b = b, g.c = c, g.transpose_b = true;
  return g;
}

RowMajorGemm gemm_ab(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c) {
  RowMajorGemm g;
  g.m = m, g.n = n, g.k = k, g.a = a, g.b = b, g.c = c;
  return g;
}

RowMajorGemm gemm_atb(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c) {
  RowMajorGemm g;
  g.m = m, g.n = n, g.k = k, g.a = a, g.b = b, g.c = c, g.transpose_a = true;
  return g;
}

struct CublasLt::Plan {
  MatmulDesc desc;
  Layout layout_a, layout_b, layout_c; // column-major: cuBLASLt's A is our B
  cublasLtMatmulAlgo_t algo{};
  bool fp64 = false;
};

CublasLt::CublasLt(DeviceAllocator &allocator, std::size_t workspace_bytes)
    : workspace_(allocator, workspace_bytes, MemoryTag::workspace) {
  CUBLAS_CHECK(cublasLtCreate(&handle_));
}

CublasLt::~CublasLt() {
  plans_.clear(); // descriptors before the handle
  if (handle_ != nullptr && cublasLtDestroy(handle_) != CUBLAS_STATUS_SUCCESS)
    std::fputs("kibench: cublasLtDestroy failed\n", stderr);
}

std::size_t CublasLt::cached_plans() const {
  std::lock_guard lock(mutex_);
  return plans_.size();
}

CublasLt::Plan &CublasLt::plan_for(const RowMajorGemm &g) {
  const int alignment = std::min({alignment_of(g.a), alignment_of(g.b), alignment_of(g.c),
                                  g.bias != nullptr ? alignment_of(g.bias) : 256});
  const Key key{g.m,
                g.n,
                g.k,
                g.lda,
                g.ldb,
                g.ldc,
                g.transpose_a,
                g.transpose_b,
                static_cast<int>(g.input_type),
                static_cast<int>(g.output_type),
                g.bias != nullptr,
                alignment,
                g.beta != 0.0};
  std::lock_guard lock(mutex_);
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;

  auto plan = std::make_unique<Plan>();
  plan->fp64 = g.input_type == ElementType::fp64;
  const cublasComputeType_t compute = plan->fp64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale = plan->fp64 ? CUDA_R_64F : CUDA_R_32F;
  cublasLtMatmulDesc_t desc = nullptr;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, compute, scale));
  plan->desc.reset(desc);

  // Column-major problem: Cᵀ[n, m] = op(B)ᵀ[n, k] · op(A)ᵀ[k, m].
  const cublasOperation_t op_first = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
  CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
  if (g.bias != nullptr) {
    // The bias runs along cuBLASLt's rows, i.e. along our columns (n).
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    const cudaDataType_t bias_type = cuda_type(g.output_type);
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                sizeof(bias_type)));
  }

  const cudaDataType_t in = cuda_type(g.input_type);
  // Stored shapes, column-major: B as given is [ldb-rows...]; a row-major
  // [r, c] buffer is a column-major [c, r] one.
  plan->layout_a = g.transpose_b ? make_layout(in, g.k, g.n, g.ldb) : make_layout(in, g.n, g.k, g.ldb);
  plan->layout_b = g.transpose_a ? make_layout(in, g.m, g.k, g.lda) : make_layout(in, g.k, g.m, g.lda);
  plan->layout_c = make_layout(cuda_type(g.output_type), g.n, g.m, g.ldc);

  cublasLtMatmulPreference_t raw_preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&raw_preference));
  Preference preference(raw_preference);
  const std::uint64_t workspace_bytes = workspace_.bytes();
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(raw_preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)));
  const auto align = static_cast<std::uint32_t>(alignment);
  for (const auto attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(raw_preference, attribute, &align, sizeof(align)));

  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, desc, plan->layout_a.get(), plan->layout_b.get(),
                                              plan->layout_c.get(), plan->layout_c.get(), raw_preference, 1,
                                              &result, &returned));
  if (returned == 0)
    throw std::runtime_error(fmt::format("cuBLASLt has no algorithm for row-major GEMM m={} n={} k={} "
                                         "(types {}→{}, transpose a={} b={}, alignment {})",
                                         g.m, g.n, g.k, element_bytes(g.input_type) * 8,
                                         element_bytes(g.output_type) * 8, g.transpose_a, g.transpose_b,
                                         alignment));
  plan->algo = result.algo;
  return *plans_.emplace(key, std::move(plan)).first->second;
}

void CublasLt::matmul(const RowMajorGemm &gemm, cudaStream_t stream) {
  validate(gemm);
  const RowMajorGemm g = with_dense_strides(gemm);
  Plan &plan = plan_for(g);
  if (g.bias != nullptr) {
    // The pointer varies per call; the descriptor is otherwise cached.
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias,
                                                sizeof(g.bias)));
  }
  const float alpha32 = static_cast<float>(g.alpha), beta32 = static_cast<float>(g.beta);
  const void *alpha = plan.fp64 ? static_cast<const void *>(&g.alpha) : &alpha32;
  const void *beta = plan.fp64 ? static_cast<const void *>(&g.beta) : &beta32;
  CUBLAS_CHECK(cublasLtMatmul(handle_, plan.desc.get(), alpha, g.b, plan.layout_a.get(), g.a,
                              plan.layout_b.get(), beta, g.c, plan.layout_c.get(), g.c, plan.layout_c.get(),
                              &plan.algo, workspace_.data(), workspace_.bytes(), stream));
}

} // namespace kibench::gpu
