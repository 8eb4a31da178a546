// One rank's share of the vocabulary-parallel fused loss: its buffers and
// the work it enqueues between the collectives (emulated_implementation.hpp
// has the data flow). The single-GPU emulation holds n of them on one
// device; `fused-vocab-parallel` one per GPU (multi_gpu_implementation.hpp).
// Either way the rank reads only its own rows of W_s and W_t, the inputs
// every rank holds (x_s, x_t, the targets) and what all-reduces hand it.
#pragma once

#include <cstdint>
#include <span>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/lm_head/fused/one_hot.hpp"
#include "kernels/common/token_count.hpp"
#include "kernels/lm_head/vocab_parallel/emulation_plan.hpp"
#include "kernels/lm_head/vocab_parallel/shard_row_loss.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::vocab_parallel {

// What a rank reads, on its device.
struct ShardInputs {
  const __nv_bfloat16 *student_input = nullptr;  // x_s [T, Hs]
  const __nv_bfloat16 *teacher_input = nullptr;  // x_t [T, H]
  const std::int64_t *target = nullptr;          // y [T]
  const __nv_bfloat16 *student_weight = nullptr; // the shard's rows of W_s, [size, Hs]
  const __nv_bfloat16 *teacher_weight = nullptr; // the shard's rows of W_t, [size, H]
  const __nv_bfloat16 *ones = nullptr;           // [R] of 1, for grad b as a GEMM (bias only)
};

class ShardWork {
public:
  // Allocates the rank's per-chunk buffers for R = `chunk_rows` token rows
  // and its fp32 grad W (and grad b) accumulators, on the current device.
  ShardWork(const ShardLayout &layout, const Workload &workload, std::int64_t chunk_rows,
            gpu::DeviceAllocator &allocator);

  [[nodiscard]] const ShardLayout &layout() const { return layout_; }
  void bind(const ShardInputs &inputs) { inputs_ = inputs; }

  // b_s[b:e] and b_t[b:e] into the shard's own 256-byte aligned slices (the
  // logit GEMMs' bias epilogue reads them as `fused` reads b), from whole
  // bias vectors on `source_device` (null: the workload has none).
  void copy_bias_slices(const __nv_bfloat16 *student_bias, const __nv_bfloat16 *teacher_bias, int source_device,
                        int own_device, cudaStream_t stream);

  // z_s,r and z_t,r for token rows [begin, begin + rows):
  //   z_s,r [rows, ld] = x_s[begin:] · W_s[b:e]ᵀ (+ b_s[b:e]), z_t,r likewise (cuBLASLt, bf16)
  void logits(std::int64_t begin, std::int64_t rows, gpu::CublasLt &blas, cudaStream_t stream);
  // The row kernels' arguments for those rows (shard_row_loss.hpp).
  [[nodiscard]] ShardRowArgs row_args(std::int64_t begin, std::int64_t rows);
  // From G'_r (written over z_s,r by shard_row_gradient):
  //   grad x partial [rows, Hs] fp32 = G'_r · W_s[b:e], less w_h W_s[y_i] where the shard holds y_i
  void grad_input_partial(std::int64_t begin, std::int64_t rows, gpu::CublasLt &blas, cudaStream_t stream);
  //   grad W_s,r [size, Hs] fp32 (+)= G'_rᵀ · x_s[begin:]
  //   grad b_s,r [size] fp32 (+)= 1ᵀ G'_r
  // overwritten on the first chunk (begin = 0), accumulated after. The two
  // are apart so that grad x's all-reduce can run beside these GEMMs.
  void grad_weight(std::int64_t begin, std::int64_t rows, gpu::CublasLt &blas, cudaStream_t stream);
  // After the last chunk: the one-hot term of the targets the shard holds
  // subtracted from grad W_s,r (and grad b_s,r), then divided by N into
  // `grad_weight_rows` [size, Hs] bf16 (rounded once) and
  // `grad_bias_rows` [size] fp32 (null without a bias).
  void finish(const gpu::fused::TargetOrder &order, std::int64_t tokens, const gpu::TokenCount *count,
              __nv_bfloat16 *grad_weight_rows, float *grad_bias_rows, cudaStream_t stream);

  // The collectives' operands: the first `rows` rows of each statistic and
  // of the grad x partial.
  [[nodiscard]] std::span<float> maxima(std::int64_t rows) { return rows_of(maxima_, rows, kMaximumSlots); }
  [[nodiscard]] std::span<float> sums(std::int64_t rows) { return rows_of(sums_, rows, kSumSlots); }
  [[nodiscard]] std::span<float> kl(std::int64_t rows) { return rows_of(kl_, rows, kKlSlots); }
  [[nodiscard]] std::span<float> grad_input(std::int64_t rows) {
    return rows_of(grad_input_, rows, workload_->student_hidden);
  }

private:
  static std::span<float> rows_of(gpu::DeviceBuffer<float> &buffer, std::int64_t rows, std::int64_t width) {
    return {buffer.data(), static_cast<std::size_t>(rows * width)};
  }

  ShardLayout layout_;
  const Workload *workload_;
  ShardInputs inputs_;
  gpu::DeviceBuffer<__nv_bfloat16> student_logits_; // [R, ld]: z_s,r, then G'_r
  gpu::DeviceBuffer<__nv_bfloat16> teacher_logits_; // [R, ld]: z_t,r
  gpu::DeviceBuffer<float> maxima_;                 // [R, 3]
  gpu::DeviceBuffer<float> sums_;                   // [R, 4]
  gpu::DeviceBuffer<float> kl_;                     // [R, 2]
  gpu::DeviceBuffer<float> grad_input_;  // [R, Hs]: this rank's part of grad x, then the sum over ranks
  gpu::DeviceBuffer<float> grad_weight_; // [size, Hs]: Σ over chunks of G'_rᵀ x_s
  gpu::DeviceBuffer<float> grad_bias_;   // [size]: Σ over chunks of G'_r's column sums; empty without a bias
  gpu::DeviceBuffer<__nv_bfloat16> student_bias_, teacher_bias_; // [size] slices; empty without biases
};

} // namespace kibench::vocab_parallel
