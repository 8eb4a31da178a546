#include "kernels/cuda/cuda_check.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace kibench::gpu {

void throw_cuda_error(cudaError_t status, const char *call, const char *file, int line) {
  throw std::runtime_error(fmt::format("{}:{}: {} failed: {} ({})", file, line, call,
                                       cudaGetErrorString(status), cudaGetErrorName(status)));
}

void throw_cublas_error(cublasStatus_t status, const char *call, const char *file, int line) {
  throw std::runtime_error(fmt::format("{}:{}: {} failed: {} ({})", file, line, call,
                                       cublasLtGetStatusString(status), cublasLtGetStatusName(status)));
}

} // namespace kibench::gpu
