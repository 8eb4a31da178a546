// PyTorch eager's kernels for jsd's op sequence (the `torch` provider of
// Liger's benchmark_jsd.py), one launch per op over full fp32 tensors, as
// eager mode runs them; kernels/jsd/jsd_implementations.cpp chains them.
// n is the element count of a [T, V] tensor; rows/columns where a op reduces.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace kibench::gpu::jsd::torch_ops {

// out = exp(in)
void exp(const float *in, std::size_t n, float *out, cudaStream_t stream);
// out = log(in)
void log(const float *in, std::size_t n, float *out, cudaStream_t stream);
// out = torch.lerp(start, end, weight)
void lerp(const float *start, const float *end, float weight, std::size_t n, float *out, cudaStream_t stream);
// kl_div(input, target, reduction="none", log_target=True): out = exp(target) (target - input)
void kl_div(const float *input, const float *target, std::size_t n, float *out, cudaStream_t stream);
// out[i] = sum_k in[i, k] (fp32 accumulation, one block per row)
void row_sum(const float *in, std::int64_t rows, std::int64_t columns, float *out, cudaStream_t stream);
// out[i] = a * x[i] + b * y[i]: beta * kl_teacher.sum(-1) + (1 - beta) * kl_student.sum(-1)
// (three eager kernels folded into one over T elements; y may equal x with b = 0)
void axpby(float a, const float *x, float b, const float *y, std::int64_t n, float *out, cudaStream_t stream);
// The masked mean: out[i] = (label[i] != ignore ? rows[i] : 0) / N with N
// read from the device (TokenCount's valid), then the sum to *loss
// (double, fixed order).
void masked_mean(const float *rows, const std::int64_t *label, std::int64_t ignore_index, std::int64_t vocab,
                 std::int64_t tokens, const void *count, float *scaled, double *loss, cudaStream_t stream);
// Its backward: g[i] = label valid ? 1 / N : 0, times `weight`.
void masked_mean_backward(const std::int64_t *label, std::int64_t ignore_index, std::int64_t vocab,
                          std::int64_t tokens, const void *count, float weight, float *g, cudaStream_t stream);
// kl_div's backward, g the [T] upstream gradient broadcast along rows:
//   to the input:  out (+)= -exp(target) * g[row]
//   to the target: out (+)= exp(target) * (target - input + 1) * g[row]
void kl_div_backward_input(const float *target, const float *g, std::int64_t rows, std::int64_t columns,
                           bool accumulate, float *out, cudaStream_t stream);
void kl_div_backward_target(const float *input, const float *target, const float *g, std::int64_t rows,
                            std::int64_t columns, bool accumulate, float *out, cudaStream_t stream);
// out = grad / m (log's backward)
void div(const float *grad, const float *m, std::size_t n, float *out, cudaStream_t stream);
// out = grad * (1 - weight) (lerp's backward to its start)
void scale(const float *grad, float factor, std::size_t n, float *out, cudaStream_t stream);
// out (+)= grad * result (exp's backward, result = exp(input))
void mul(const float *grad, const float *result, std::size_t n, bool accumulate, float *out, cudaStream_t stream);

} // namespace kibench::gpu::jsd::torch_ops
