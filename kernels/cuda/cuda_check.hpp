// Status checks for the CUDA runtime and cuBLASLt. Every call into either
// goes through CUDA_CHECK / CUBLAS_CHECK, which throw std::runtime_error
// naming the file, the line, the call and the library's own error text, so
// a failure on a remote GPU machine is diagnosable from its log alone.
// After a kernel launch, CUDA_CHECK_LAUNCH() catches bad configurations
// (the launch itself returns no status).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace kibench::gpu {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char *call, const char *file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char *call, const char *file, int line);

inline void check_cuda(cudaError_t status, const char *call, const char *file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

inline void check_cublas(cublasStatus_t status, const char *call, const char *file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, call, file, line);
}

} // namespace kibench::gpu

#define CUDA_CHECK(call) ::kibench::gpu::check_cuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::kibench::gpu::check_cublas((call), #call, __FILE__, __LINE__)
// The launch's own error (bad grid, too much shared memory), without a sync.
#define CUDA_CHECK_LAUNCH()                                                                                  \
  ::kibench::gpu::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
