// cuBLASLt, row-major. kibench stores every matrix row-major; cuBLASLt is
// column-major. A row-major [r, c] matrix is the column-major [c, r] matrix
// of its transpose, so C = op(A)·op(B) is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ:
// the operands swap places and keep their transpose flags. Callers only
// ever think row-major.
//
// Types: bf16 A/B accumulate in fp32 (CUBLAS_COMPUTE_32F, as PyTorch's bf16
// matmuls do) into a bf16 or fp32 C; fp64 A/B/C use CUBLAS_COMPUTE_64F (the
// GPU oracle); FP8 e4m3 A/B with a scale per row of A and per column of B
// (RowMajorGemm::fp8) accumulate in fp32 into a bf16 or fp32 C. An fp32 or
// fp64 C with beta = 1 accumulates (grad W over token chunks). The
// algorithm is chosen once per shape/type/alignment and cached with its
// descriptors: cuBLASLt's heuristic's first pick, or, with tuning on, the
// fastest of its first few picks timed on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/device_buffer.hpp"
#include "lib/implementation/tensor_ref.hpp"

namespace kibench::gpu {

// FP8 operands (cuBLASLt's outer-vector scaling,
// CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F): A and B hold e4m3 codes,
// and row i of op(A) and column j of op(B) carry fp32 scales, so
//   C[i, j] = alpha · a[i] · b[j] · Σ_l A[i, l] B[l, j] (+ bias[j]) + beta · C[i, j]
// accumulated in fp32: cuBLASLt's default (not its fast accumulation)
// promotes the tensor cores' narrower FP8 accumulator (about 14 significant
// bits) to fp32 at intervals along k. cuBLASLt documents this scaling mode
// for compute capability 9.0 (Hopper) only, since cuBLAS 12.9.
// Hopper's FP8 kernels take only A stored [m, k] and B stored [n, k]
// (transpose_b: both K-major, cuBLASLt's "TN"), with k and both row strides
// multiples of 16 and 16-byte aligned operands; C's columns n must make
// whole 16-byte rows (a bf16 n a multiple of 8). CublasLt::matmul refuses
// anything else; a bias (bf16) only with a bf16 C.
struct Fp8Scales {
  const float *a = nullptr; // [m]
  const float *b = nullptr; // [n]
  // cuBLASLt's fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM): the
  // tensor cores' FP8 accumulator is not promoted to fp32 along k. Faster,
  // and the partial sums keep about 14 significant bits.
  bool fast_accumulation = false;
  [[nodiscard]] bool on() const { return a != nullptr || b != nullptr; }
};

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
  // SMs cuBLASLt should plan for (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET) when
  // a kernel on another stream holds the rest; 0: the whole GPU.
  int sm_count_target = 0;
  // fp32 alpha and beta read from the device when the GEMM runs
  // (CUBLASLT_POINTER_MODE_DEVICE) instead of `alpha` and `beta` (e.g. 1/N
  // that a kernel counted); bf16 inputs only. beta must point at 0 or 1
  // as `beta` says (it selects the plan).
  const float *device_alpha = nullptr;
  const float *device_beta = nullptr;
  // Set: A and B are e4m3 with these scales, and input_type is not read
  // (Fp8Scales above).
  Fp8Scales fp8 = {};
};

// `g` with its row strides spelled out: the dense ones where it left 0.
RowMajorGemm with_dense_strides(RowMajorGemm g);

// C[m,n] = A[m,k] · B[n,k]ᵀ   e.g. logits z = x · Wᵀ
RowMajorGemm gemm_abt(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c);
// C[m,n] = A[m,k] · B[k,n]    e.g. grad x = G · W
RowMajorGemm gemm_ab(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c);
// C[m,n] = A[k,m]ᵀ · B[k,n]   e.g. grad W = Gᵀ · x
RowMajorGemm gemm_atb(std::int64_t m, std::int64_t n, std::int64_t k, const void *a, const void *b, void *c);

// Algorithm choice by measurement. cuBLASLt's heuristic ranks algorithms
// with a model; its first pick is not always the fastest (on an H200 the
// seed workload's K = 4096 teacher logit GEMM ran at 713 TFLOP/s with it
// against 808 for the K = 2048 student GEMM). With `candidates` > 1 the
// first matmul() of each new shape while tuning is on asks the heuristic
// for up to that many algorithms, runs each once on that call's own
// operands, then, after ~20 ms of warm-up, `repetitions` rounds that time
// every candidate once under CUDA events (cublaslt.cpp says why in
// rounds), and keeps the one with the least median time.
//
// Cold time is not what a GEMM costs at the board's power limit: two
// candidates within 1–2 % of each other cold can be ~10 % apart back to
// back at the cap (docs/perf.md, "The targets, where they stand"). Where
// `at_cap_margin` > 0 and the fastest candidate takes at least
// `at_cap_min_ms` a call, every candidate within that fraction of its
// median goes on to `at_cap_rounds` rounds in which each runs back to back
// for `at_cap_burst_s` (the board at its limit after the first), and the
// one with the least median time a call at the cap is kept. Such a
// candidate costs at most the margin cold.
struct AlgorithmTuning {
  int candidates = 1; // 1: the heuristic's first pick, untimed
  int repetitions = 7;
  double at_cap_margin = 0.0; // 0: kept by cold time alone
  double at_cap_min_ms = 1.0;
  double at_cap_burst_s = 0.1;
  int at_cap_rounds = 3;
};

// What the GPU implementations that stand for cuBLASLt's best (fused,
// cublas-floor) tune with: the heuristic's first 16 picks, and those
// within 3 % of the fastest timed again at the power limit. Measured on
// the H100 at the seed (docs/perf-log.md, "cuBLASLt's grad GEMM candidates
// by energy"): by cold time alone the floor's grad W kept either 128 × 256
// tiles or tile enum 495, 6.4 % apart at the cap (5.80 against 6.19 ms),
// which made the floor's sustained figure bimodal, and `fused`'s grad x kept
// 128 × 128 tiles, 6 % behind the 256 × 128 split-K 2 candidate there
// (2.30 against 2.17 ms); the stage at the cap keeps the faster one in both.
// The second timing starts at 0.5 ms a call, so that `fused`'s grad W
// halves at the seed (0.92–1.02 ms a call, six a pass) are among the shapes
// it chooses for.
inline constexpr AlgorithmTuning kMeasuredTuning{
    .candidates = 16, .repetitions = 7, .at_cap_margin = 0.03, .at_cap_min_ms = 0.5};

// What tuning found for one GEMM shape, for the record.
struct TuningRecord {
  std::string shape;         // "m×n×k bf16→fp32 ta=0 tb=1 beta=0 bias=0"
  int timed = 0;             // candidates that ran
  int chosen = 0;            // heuristic rank of the fastest (0: its first pick)
  double heuristic_ms = 0.0; // median time of the heuristic's first pick (0: it did not run)
  double chosen_ms = 0.0;    // median time of the chosen one
  int at_cap = 0;            // candidates timed at the power limit (0: none)
  double at_cap_ms = 0.0;    // the chosen one's median time a call there
  double cold_best_ms = 0.0; // the fastest candidate's median time (cold rounds)
  double flops = 0.0;        // 2·m·n·k
  std::string algorithm;     // the chosen one's configuration (algorithm_config), for the record
};

// "algo 66, tile 128x256, stages 128xAUTO, cluster 2x1x1, split-k 1": the
// configuration cuBLASLt reports for `algo` (its cublasLt.h enum values
// where this file knows no name).
std::string algorithm_config(const cublasLtMatmulAlgo_t &algo);

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

  // While tuning is on, matmul() tunes every shape it has not tuned yet
  // before running it. Tuning synchronizes the stream, and its runs of a
  // beta ≠ 0 GEMM accumulate into C several times: turn it on for a dry
  // run whose results are thrown away, and off before work that counts.
  // Ignored while the stream is being captured into a graph.
  void set_tuning(AlgorithmTuning tuning);
  // Tuning on for `work` (the dry run) and whatever it enqueues on
  // `stream`, which is synchronized; off again afterwards, also on a throw.
  void tune_during(AlgorithmTuning tuning, cudaStream_t stream, const std::function<void()> &work);
  [[nodiscard]] std::vector<TuningRecord> tuning_records() const;

  // For studies that time cuBLASLt's candidates one by one: the heuristic's
  // first `count` algorithms for `gemm` that run on its operands (each is
  // launched once on `stream` to find out), in the heuristic's order, and
  // `gemm` enqueued with one of them instead of the plan's choice.
  [[nodiscard]] std::vector<cublasLtMatmulAlgo_t> runnable_algorithms(const RowMajorGemm &gemm, int count,
                                                                      cudaStream_t stream);
  void matmul_with(const RowMajorGemm &gemm, const cublasLtMatmulAlgo_t &algo, cudaStream_t stream);

  [[nodiscard]] cublasLtHandle_t handle() const { return handle_; }
  [[nodiscard]] std::size_t cached_plans() const;

private:
  struct Plan;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         int, int, int, int, int, int, int, int, int, int>;
  Plan &plan_for(const RowMajorGemm &gemm);
  [[nodiscard]] std::vector<cublasLtMatmulHeuristicResult_t> heuristic(const Plan &plan, int count) const;
  cublasStatus_t launch(const Plan &plan, const RowMajorGemm &gemm, const cublasLtMatmulAlgo_t &algo,
                        cudaStream_t stream);
  void tune(Plan &plan, const RowMajorGemm &gemm, const AlgorithmTuning &tuning, cudaStream_t stream);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer<std::byte> workspace_;
  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  AlgorithmTuning tuning_;
  std::vector<TuningRecord> tuning_records_;
};

} // namespace kibench::gpu
