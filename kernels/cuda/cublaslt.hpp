// cuBLASLt, row-major. kibench stores every matrix row-major; cuBLASLt is
// column-major. A row-major [r, c] matrix is the column-major [c, r] matrix
// of its transpose, so C = op(A)·op(B) is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ:
// the operands swap places and keep their transpose flags. Callers only
// ever think row-major.
//
// Types: bf16 A/B accumulate in fp32 (CUBLAS_COMPUTE_32F, as PyTorch's bf16
// matmuls do) into a bf16 or fp32 C; fp64 A/B/C use CUBLAS_COMPUTE_64F (the
// GPU oracle). An fp32 or fp64 C with beta = 1 accumulates (grad W over
// token chunks). The algorithm is chosen by cuBLASLt's heuristic once per
// shape/type/alignment and cached with its descriptors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "cuda/device_buffer.hpp"
#include "impl/tensor_ref.hpp"

namespace kibench::gpu {

// C[m, n] = alpha · op(A) · op(B) + beta · C  (+ bias[n] on every row)
//   op(A) is [m, k]: A stored [m, k] (lda ≥ k), or [k, m] with transpose_a (lda ≥ m)
//   op(B) is [k, n]: B stored [k, n] (ldb ≥ n), or [n, k] with transpose_b (ldb ≥ k)
// Leading dimensions are row strides in elements (0 means dense).
struct RowMajorGemm {
  std::int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr;
  bool transpose_a = false;
  std::int64_t lda = 0;
  const void *b = nullptr;
  bool transpose_b = false;
  std::int64_t ldb = 0;
  void *c = nullptr;
  std::int64_t ldc = 0;
  ElementType input_type = ElementType::bf16;  // A and B: bf16 or fp64
  ElementType output_type = ElementType::bf16; // C: bf16/fp32 (bf16 inputs) or fp64
  double alpha = 1.0;
  double beta = 0.0;
  // Optional [n] vector of output_type added in the epilogue, before C is
  // rounded (what nn.Linear's fused addmm does).
  const void *bias = nullptr;
};

// C[m,n] = A[m,k] · B[n,k]ᵀ   e.g. logits z = x · Wᵀ
RowMajorGemm gemm_abt(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c);
// C[m,n] = A[m,k] · B[k,n]    e.g. grad x = G · W
RowMajorGemm gemm_ab(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c);
// C[m,n] = A[k,m]ᵀ · B[k,n]   e.g. grad W = Gᵀ · x
RowMajorGemm gemm_atb(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c);

class CublasLt {
public:
  static constexpr std::size_t kDefaultWorkspaceBytes = std::size_t{64} << 20;

  // The workspace is allocated from `allocator` (tagged workspace).
  explicit CublasLt(DeviceAllocator &allocator, std::size_t workspace_bytes = kDefaultWorkspaceBytes);
  ~CublasLt();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

  // Enqueues one GEMM on `stream`. All calls on one CublasLt must use one
  // stream at a time: they share the workspace.
  void matmul(const RowMajorGemm &gemm, cudaStream_t stream);

  [[nodiscard]] cublasLtHandle_t handle() const { return handle_; }
  [[nodiscard]] std::size_t cached_plans() const;

private:
  struct Plan;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         int, int, int, int, int, int, int>;
  Plan &plan_for(const RowMajorGemm &gemm);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer<std::byte> workspace_;
  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

} // namespace kibench::gpu
