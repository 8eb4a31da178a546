// The example plugin's GPU lane, example-cuda-simt: the loss and student
// gradients of docs/loss-math.md in straightforward CUDA, all of it on
// kibench's stream. Per chunk of up to 1024 tokens:
//   z_s = x_s W_sᵀ (+ b_s), z_t = x_t W_tᵀ (+ b_t)   tiled fp32 SIMT GEMM
//   one block per row: cross-entropy, generalized JSD, and the row's
//   gradient G written over z_s                      (fp32, block reductions)
//   grad x_s[chunk] = G W_s,  grad W_s += Gᵀ x_s[chunk],  grad b_s += Σ rows of G
// The GEMMs use no tensor cores and stage 64×64 tiles through shared
// memory: an example of the ABI, not a fast kernel.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "example_plugin.h"

namespace {

constexpr int64_t kChunkRows = 1024;
constexpr int kTile = 64;     // output tile: 64 × 64
constexpr int kTileK = 16;    // reduction slice staged per step
constexpr int kThreads = 256; // 16 × 16 threads, 4 × 4 outputs each

// Views of a matrix as A(r, c): row-major, or the transpose of a row-major one.
struct Bf16Rows {
  const __nv_bfloat16 *p;
  int64_t ld;
  __device__ float operator()(int64_t r, int64_t c) const { return __bfloat162float(p[r * ld + c]); }
};
struct Bf16Transposed {
  const __nv_bfloat16 *p;
  int64_t ld;
  __device__ float operator()(int64_t r, int64_t c) const { return __bfloat162float(p[c * ld + r]); }
};
struct F32Rows {
  const float *p;
  int64_t ld;
  __device__ float operator()(int64_t r, int64_t c) const { return p[r * ld + c]; }
};
struct F32Transposed {
  const float *p;
  int64_t ld;
  __device__ float operator()(int64_t r, int64_t c) const { return p[c * ld + r]; }
};

// C[m, n] = Σ_k A(m, k) B(k, n) (+ bias[n]), or C += that when accumulate.
template <class A, class B>
__global__ void gemm(int64_t M, int64_t N, int64_t K, A a, B b, float *c, int64_t ldc,
                     const __nv_bfloat16 *bias, bool accumulate) {
  __shared__ float as[kTileK][kTile];
  __shared__ float bs[kTileK][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile,
                col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads) {
      const int kk = e / kTile, mm = e % kTile;
      const int64_t k = k0 + kk, r = row0 + mm, col = col0 + mm;
      as[kk][mm] = (r < M && k < K) ? a(r, k) : 0.0f;
      bs[kk][mm] = (col < N && k < K) ? b(k, col) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTileK; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = as[kk][ty * 4 + i];
      for (int j = 0; j < 4; ++j) bv[j] = bs[kk][tx * 4 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int64_t r = row0 + ty * 4 + i;
    if (r >= M) continue;
    for (int j = 0; j < 4; ++j) {
      const int64_t col = col0 + tx * 4 + j;
      if (col >= N) continue;
      float v = acc[i][j];
      if (bias != nullptr) v += __bfloat162float(bias[col]);
      c[r * ldc + col] = accumulate ? c[r * ldc + col] + v : v;
    }
  }
}

template <class A, class B>
void launch_gemm(int64_t M, int64_t N, int64_t K, A a, B b, float *c, int64_t ldc, const __nv_bfloat16 *bias,
                 bool accumulate, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((M + kTile - 1) / kTile));
  gemm<<<grid, kThreads, 0, stream>>>(M, N, K, a, b, c, ldc, bias, accumulate);
}

// The block's sum or maximum of one value per thread (kThreads threads);
// every thread gets the result.
template <bool kMax> __device__ float block_reduce(float v) {
  __shared__ float partial[kThreads / 32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_down_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float r = partial[0];
    for (int w = 1; w < kThreads / 32; ++w) r = kMax ? fmaxf(r, partial[w]) : r + partial[w];
    result = r;
  }
  __syncthreads();
  const float out = result;
  __syncthreads(); // `partial` and `result` are reused by the next call
  return out;
}

__device__ float log_mixture(float log_q, float log_p, float log_one_minus_beta, float log_beta) {
  const float u = log_q + log_one_minus_beta, v = log_p + log_beta;
  return fmaxf(u, v) + log1pf(expf(-fabsf(u - v)));
}

// One block per chunk row: the row's cross-entropy and JSD into sums[0]
// and sums[1]; with gradients, the row of z_s becomes d loss / d z_s
// (zero for an ignored token). N is read from *valid.
__global__ void row_kernel(float *z_s, const float *z_t, int64_t V, const int64_t *target, float beta,
                           float tau, int64_t ignore_index, const int *valid, float weight_hard,
                           float weight_soft, bool gradients, double *sums) {
  float *zs = z_s + static_cast<int64_t>(blockIdx.x) * V;
  const float *zt = z_t + static_cast<int64_t>(blockIdx.x) * V;
  const int64_t y = target[blockIdx.x];
  if (y == ignore_index) {
    if (gradients)
      for (int64_t k = threadIdx.x; k < V; k += kThreads) zs[k] = 0.0f;
    return;
  }
  float max_z = -INFINITY, max_t = -INFINITY;
  for (int64_t k = threadIdx.x; k < V; k += kThreads) {
    max_z = fmaxf(max_z, zs[k]);
    max_t = fmaxf(max_t, zt[k]);
  }
  max_z = block_reduce<true>(max_z);
  max_t = block_reduce<true>(max_t);
  float sum_z = 0.0f, sum_a = 0.0f, sum_b = 0.0f;
  for (int64_t k = threadIdx.x; k < V; k += kThreads) {
    sum_z += expf(zs[k] - max_z);
    sum_a += expf((zs[k] - max_z) / tau);
    sum_b += expf((zt[k] - max_t) / tau);
  }
  const float lse_raw = max_z + logf(block_reduce<false>(sum_z));
  const float lse_s = max_z / tau + logf(block_reduce<false>(sum_a));
  const float lse_t = max_t / tau + logf(block_reduce<false>(sum_b));
  const float log_one_minus_beta = logf(1.0f - beta), log_beta = logf(beta);
  const bool mixture = beta > 0.0f && beta < 1.0f;
  float kl_pm = 0.0f, kl_qm = 0.0f, kl_pq = 0.0f, kl_qp = 0.0f;
  for (int64_t k = threadIdx.x; k < V; k += kThreads) {
    const float log_q = zs[k] / tau - lse_s, log_p = zt[k] / tau - lse_t;
    const float q = expf(log_q), p = expf(log_p);
    if (mixture) {
      const float log_m = log_mixture(log_q, log_p, log_one_minus_beta, log_beta);
      kl_pm += p * (log_p - log_m);
      kl_qm += q * (log_q - log_m);
    } else {
      kl_pq += p * (log_p - log_q);
      kl_qp += q * (log_q - log_p);
    }
  }
  kl_pm = block_reduce<false>(kl_pm);
  kl_qm = block_reduce<false>(kl_qm);
  kl_pq = block_reduce<false>(kl_pq);
  kl_qp = block_reduce<false>(kl_qp);
  const float jsd = beta <= 0.0f ? kl_pq : beta >= 1.0f ? kl_qp : beta * kl_pm + (1.0f - beta) * kl_qm;
  const float kl_student = beta >= 1.0f ? kl_qp : kl_qm;
  const float cross_entropy = lse_raw - zs[y];
  __syncthreads(); // every thread has read zs[y] before the row is overwritten
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], static_cast<double>(cross_entropy));
    atomicAdd(&sums[1], static_cast<double>(jsd));
  }
  if (!gradients) return;
  const float n = static_cast<float>(max(*valid, 1));
  const float hard_scale = weight_hard / n, soft_scale = weight_soft / n;
  for (int64_t k = threadIdx.x; k < V; k += kThreads) {
    const float log_q = zs[k] / tau - lse_s, log_p = zt[k] / tau - lse_t;
    const float q = expf(log_q);
    float d_jsd;
    if (mixture) {
      d_jsd = (1.0f - beta) / tau * q *
              (log_q - log_mixture(log_q, log_p, log_one_minus_beta, log_beta) - kl_student);
    } else if (beta <= 0.0f) {
      d_jsd = (q - expf(log_p)) / tau;
    } else {
      d_jsd = q * (log_q - log_p - kl_student) / tau;
    }
    const float softmax = expf(zs[k] - lse_raw) - (k == y ? 1.0f : 0.0f);
    zs[k] = hard_scale * softmax + soft_scale * d_jsd;
  }
}

// N = Σ_i (y_i ≠ ignore_index), one block.
__global__ void count_valid(const int64_t *target, int64_t T, int64_t ignore_index, int *valid) {
  float count = 0.0f;
  for (int64_t i = threadIdx.x; i < T; i += kThreads) count += target[i] != ignore_index ? 1.0f : 0.0f;
  count = block_reduce<false>(count);
  if (threadIdx.x == 0) *valid = static_cast<int>(count);
}

// grad_b[k] += Σ_i G[i, k] over the chunk's rows.
__global__ void column_sums(const float *g, int64_t rows, int64_t V, float *grad_bias) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= V) return;
  float sum = 0.0f;
  for (int64_t i = 0; i < rows; ++i) sum += g[i * V + k];
  grad_bias[k] += sum;
}

struct GpuState {
  kibench_plugin_inputs in{};
  float *grad_input = nullptr, *grad_weight = nullptr, *grad_bias = nullptr;
  float *z_s = nullptr, *z_t = nullptr;
  double *sums = nullptr; // cross-entropy and JSD, summed over valid rows
  int *valid = nullptr;
  std::size_t held_bytes = 0;
  cudaStream_t stream = nullptr;
};

int32_t cuda_failure(cudaError_t error, const char *what, char *message) {
  std::snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "%s: %s", what, cudaGetErrorString(error));
  return error == cudaErrorMemoryAllocation ? KIBENCH_PLUGIN_RESOURCE_EXCEEDED : KIBENCH_PLUGIN_RUNTIME_ERROR;
}

template <class T> cudaError_t allocate(GpuState &s, T *&pointer, int64_t count) {
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  const cudaError_t error = cudaMalloc(reinterpret_cast<void **>(&pointer), bytes);
  if (error == cudaSuccess) s.held_bytes += bytes;
  return error;
}

} // namespace

extern "C" {

void *example_gpu_create(void *, char *message) {
  auto *s = new (std::nothrow) GpuState;
  if (s == nullptr) example_message(message, "out of host memory");
  return s;
}

int32_t example_gpu_release(void *state, char *) {
  auto &s = *static_cast<GpuState *>(state);
  if (s.stream != nullptr) cudaStreamSynchronize(s.stream);
  void *buffers[] = {s.grad_input, s.grad_weight, s.grad_bias, s.z_s, s.z_t, s.sums, s.valid};
  for (void *b : buffers) cudaFree(b);
  s = GpuState{};
  return KIBENCH_PLUGIN_OK;
}

void example_gpu_destroy(void *state) {
  char message[KIBENCH_PLUGIN_MESSAGE_BYTES];
  example_gpu_release(state, message);
  delete static_cast<GpuState *>(state);
}

int32_t example_gpu_prepare(void *state, const kibench_plugin_inputs *inputs, char *message) {
  auto &s = *static_cast<GpuState *>(state);
  s.in = *inputs;
  s.stream = static_cast<cudaStream_t>(inputs->stream);
  const kibench_workload_info &w = inputs->info;
  const int64_t chunk = w.tokens < kChunkRows ? w.tokens : kChunkRows;
  cudaError_t e = cudaSetDevice(inputs->device);
  if (e == cudaSuccess) e = allocate(s, s.grad_input, w.tokens * w.student_hidden);
  if (e == cudaSuccess) e = allocate(s, s.grad_weight, w.vocab * w.student_hidden);
  if (e == cudaSuccess && inputs->student_bias.data != nullptr) e = allocate(s, s.grad_bias, w.vocab);
  if (e == cudaSuccess) e = allocate(s, s.z_s, chunk * w.vocab);
  if (e == cudaSuccess) e = allocate(s, s.z_t, chunk * w.vocab);
  if (e == cudaSuccess) e = allocate(s, s.sums, 2);
  if (e == cudaSuccess) e = allocate(s, s.valid, 1);
  return e == cudaSuccess ? KIBENCH_PLUGIN_OK : cuda_failure(e, "prepare", message);
}

int32_t example_gpu_run(void *state, int32_t pass, void *stream_handle, char *message) {
  auto &s = *static_cast<GpuState *>(state);
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  const kibench_workload_info &w = s.in.info;
  const int64_t T = w.tokens, V = w.vocab, H = w.hidden, Hs = w.student_hidden;
  const auto *x_s = static_cast<const __nv_bfloat16 *>(s.in.student_input.data);
  const auto *w_s = static_cast<const __nv_bfloat16 *>(s.in.student_weight.data);
  const auto *x_t = static_cast<const __nv_bfloat16 *>(s.in.teacher_input.data);
  const auto *w_t = static_cast<const __nv_bfloat16 *>(s.in.teacher_weight.data);
  const auto *b_s = static_cast<const __nv_bfloat16 *>(s.in.student_bias.data);
  const auto *b_t = static_cast<const __nv_bfloat16 *>(s.in.teacher_bias.data);
  const auto *y = static_cast<const int64_t *>(s.in.target.data);
  const bool gradients = pass != KIBENCH_PASS_FORWARD;

  cudaMemsetAsync(s.sums, 0, 2 * sizeof(double), stream);
  count_valid<<<1, kThreads, 0, stream>>>(y, T, w.ignore_index, s.valid);
  if (gradients) {
    cudaMemsetAsync(s.grad_input, 0, static_cast<std::size_t>(T * Hs) * sizeof(float), stream);
    cudaMemsetAsync(s.grad_weight, 0, static_cast<std::size_t>(V * Hs) * sizeof(float), stream);
    if (s.grad_bias != nullptr)
      cudaMemsetAsync(s.grad_bias, 0, static_cast<std::size_t>(V) * sizeof(float), stream);
  }
  for (int64_t row0 = 0; row0 < T; row0 += kChunkRows) {
    const int64_t rows = T - row0 < kChunkRows ? T - row0 : kChunkRows;
    launch_gemm(rows, V, Hs, Bf16Rows{x_s + row0 * Hs, Hs}, Bf16Transposed{w_s, Hs}, s.z_s, V, b_s, false,
                stream);
    launch_gemm(rows, V, H, Bf16Rows{x_t + row0 * H, H}, Bf16Transposed{w_t, H}, s.z_t, V, b_t, false,
                stream);
    row_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        s.z_s, s.z_t, V, y + row0, static_cast<float>(w.beta), static_cast<float>(w.temperature),
        w.ignore_index, s.valid, static_cast<float>(w.weight_hard), static_cast<float>(w.weight_soft),
        gradients, s.sums);
    if (!gradients) continue;
    launch_gemm(rows, Hs, V, F32Rows{s.z_s, V}, Bf16Rows{w_s, Hs}, s.grad_input + row0 * Hs, Hs, nullptr,
                false, stream);
    launch_gemm(V, Hs, rows, F32Transposed{s.z_s, V}, Bf16Rows{x_s + row0 * Hs, Hs}, s.grad_weight, Hs,
                nullptr, true, stream);
    if (s.grad_bias != nullptr)
      column_sums<<<static_cast<unsigned>((V + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
          s.z_s, rows, V, s.grad_bias);
  }
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? KIBENCH_PLUGIN_OK : cuda_failure(e, "run", message);
}

int32_t example_gpu_outputs(void *state, kibench_outputs *outputs, char *message) {
  auto &s = *static_cast<GpuState *>(state);
  double sums[2] = {0.0, 0.0};
  int valid = 0;
  cudaError_t e = cudaStreamSynchronize(s.stream);
  if (e == cudaSuccess) e = cudaMemcpy(sums, s.sums, sizeof sums, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(&valid, s.valid, sizeof valid, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return cuda_failure(e, "outputs", message);
  const double n = valid > 0 ? valid : 1;
  const double loss = (s.in.info.weight_hard * sums[0] + s.in.info.weight_soft * sums[1]) / n;
  example_fill_outputs(outputs, loss, &s.in.info, s.grad_input, s.grad_weight, s.grad_bias, 1);
  return KIBENCH_PLUGIN_OK;
}

int32_t example_gpu_memory(void *state, kibench_memory *memory, char *) {
  const auto &s = *static_cast<GpuState *>(state);
  const kibench_workload_info &w = s.in.info;
  const uint64_t outputs = static_cast<uint64_t>(w.tokens * w.student_hidden + w.vocab * w.student_hidden +
                                                 (s.grad_bias ? w.vocab : 0)) *
                           sizeof(float);
  memory->output_bytes = outputs;
  memory->workspace_bytes = s.held_bytes - outputs;
  memory->peak_bytes = s.held_bytes;
  return KIBENCH_PLUGIN_OK;
}

} // extern "C"
