// The PyTorch eager kernels the reference chain launches, one launcher per
// ATen op it mirrors (same inputs, same outputs, same fp32 arithmetic), so
// the reference pays for each op what eager PyTorch pays: one kernel, one
// full pass over its operands. Plain types: included by host C++ and nvcc.
// Tensors are contiguous; `n` counts elements, `rows`×`cols` shapes rows.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace kibench::gpu::torch_ops {

// The scalars of the loss, on the device (nll_loss and the masked mean
// write them; the final combination reads them).
struct LossScalars {
  float cross_entropy; // nll_loss(log_softmax(z_s), y), mean over valid
  float soft;          // Σ_valid J_i / N
  float loss;          // w_h·CE + w_s·soft
  float inv_valid;     // 1 / max(1, N) in fp32, as autograd's division uses it
  long long valid;     // N = #(y ≠ ignore_index)
};

// --- dtype conversions -----------------------------------------------------
void to_float(const __nv_bfloat16 *in, float *out, std::int64_t n, cudaStream_t s);    // .float()
void to_bfloat16(const float *in, __nv_bfloat16 *out, std::int64_t n, cudaStream_t s); // .to(bf16)
// out[i, k] = bf16(in[i, k] + bias[k])   (`outputs + bias` on bf16 tensors)
void add_bias_bf16(const __nv_bfloat16 *in, const __nv_bfloat16 *bias, __nv_bfloat16 *out, std::int64_t rows,
                   std::int64_t cols, cudaStream_t s);

// --- elementwise fp32 (out may alias an input: the in-place ops) -----------
void mul_scalar(const float *in, float scalar, float *out, std::int64_t n,
                cudaStream_t s); // x * c, x.div_(τ)
void add_scalar(const float *in, float scalar, float *out, std::int64_t n, cudaStream_t s); // x + c
void exp(const float *in, float *out, std::int64_t n, cudaStream_t s);
void log(const float *in, float *out, std::int64_t n, cudaStream_t s);
void neg(const float *in, float *out, std::int64_t n, cudaStream_t s);
void abs(const float *in, float *out, std::int64_t n, cudaStream_t s);
void add(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s);
void sub(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s);
void mul(const float *a, const float *b, float *out, std::int64_t n, cudaStream_t s);
void maximum(const float *a, const float *b, float *out, std::int64_t n,
             cudaStream_t s);                                                          // amax over 2 planes
void eq_infinity(const float *in, bool *out, std::int64_t n, cudaStream_t s);          // |x| == inf
void masked_fill_zero(float *inout, const bool *mask, std::int64_t n, cudaStream_t s); // x[m] = 0

// --- broadcasts over `planes` copies of an n-element plane -----------------
// out[p, i] = a[p, i] − b[i]
void sub_planes(const float *a, const float *b, float *out, std::int64_t planes, std::int64_t n,
                cudaStream_t s);
// out[p, i] = a[i] · b[p, i]
void mul_planes(const float *a, const float *b, float *out, std::int64_t planes, std::int64_t n,
                cudaStream_t s);
// out[i, k] = scale · g[i]   (grad of a sum over the last dim, times a scalar)
void expand_rows(const float *g, float scale, float *out, std::int64_t rows, std::int64_t cols,
                 cudaStream_t s);
// out[i, k] = g[i] · b[i, k]  (an expanded row gradient times a tensor)
void mul_rows(const float *g, const float *b, float *out, std::int64_t rows, std::int64_t cols,
              cudaStream_t s);

// --- row reductions ---------------------------------------------------------
// log_softmax over each row (max, Σexp, then x − max − log Σ), fp32.
void log_softmax(const float *in, float *out, std::int64_t rows, std::int64_t cols, cudaStream_t s);
// grad_in = grad − exp(out) · Σ_row grad
void log_softmax_backward(const float *grad, const float *out, float *grad_in, std::int64_t rows,
                          std::int64_t cols, cudaStream_t s);
// out[i] = Σ_k in[i, k]
void row_sum(const float *in, float *out, std::int64_t rows, std::int64_t cols, cudaStream_t s);
// out[k] = bf16(Σ_i in[i, k]) accumulated in fp32 (grad of a broadcast bias)
void column_sum_bf16(const __nv_bfloat16 *in, __nv_bfloat16 *out, std::int64_t rows, std::int64_t cols,
                     cudaStream_t s);

// --- the loss scalars -------------------------------------------------------
// scalars->valid = #(y ≠ ignore_index) and inv_valid = 1 / max(1, valid).
void count_valid(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index,
                 LossScalars *scalars, cudaStream_t s);
// nll_loss(log_probs, y, ignore_index, mean): cross_entropy = −Σ_valid log_probs[i, y_i] / N
void nll_loss(const float *log_probs, const std::int64_t *target, std::int64_t rows, std::int64_t cols,
              std::int64_t ignore_index, LossScalars *scalars, cudaStream_t s);
// grad[i, y_i] = −scale / N for valid rows, every other element 0 (zeros + scatter)
void nll_loss_backward(const std::int64_t *target, float scale, std::int64_t rows, std::int64_t cols,
                       std::int64_t ignore_index, const LossScalars *scalars, float *grad, cudaStream_t s);
// soft = Σ_i per_row[i] · valid_i / max(1, N); then loss = w_h·CE + w_s·soft
void masked_mean_and_loss(const float *per_row, const std::int64_t *target, std::int64_t rows,
                          std::int64_t ignore_index, float weight_hard, float weight_soft,
                          LossScalars *scalars, cudaStream_t s);
// grad_row[i] = scale · valid_i / max(1, N)   (backward of the masked mean)
void masked_mean_backward(const std::int64_t *target, std::int64_t rows, std::int64_t ignore_index,
                          float scale, const LossScalars *scalars, float *grad_row, cudaStream_t s);

} // namespace kibench::gpu::torch_ops
