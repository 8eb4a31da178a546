// Small matrices for the GEMM tests: random bf16 values with their exact
// doubles, host fp64 products, device upload and download, and the
// relative error of a strided result against a dense reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <cuda_bf16.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace kibench::test {

using gpu::DeviceAllocator;
using gpu::DeviceBuffer;

template <class T> DeviceBuffer<T> upload(DeviceAllocator &allocator, const std::vector<T> &host) {
  DeviceBuffer<T> buffer(allocator, host.size());
  CUDA_CHECK(cudaMemcpy(buffer.data(), host.data(), buffer.bytes(), cudaMemcpyHostToDevice));
  return buffer;
}

template <class T> std::vector<T> download(const DeviceBuffer<T> &buffer) {
  std::vector<T> host(buffer.size());
  CUDA_CHECK(cudaMemcpy(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// Random values exactly representable in bf16, as doubles and as bf16.
struct Matrix {
  std::vector<double> values;
  std::vector<__nv_bfloat16> bf16;
};

inline Matrix random_matrix(std::size_t count, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Matrix m;
  for (std::size_t i = 0; i < count; ++i) {
    const __nv_bfloat16 b = __float2bfloat16_rn(dist(rng));
    m.bf16.push_back(b);
    m.values.push_back(static_cast<double>(__bfloat162float(b)));
  }
  return m;
}

inline double as_double(__nv_bfloat16 v) {
  return static_cast<double>(__bfloat162float(v));
}
inline double as_double(float v) {
  return static_cast<double>(v);
}
inline double as_double(double v) {
  return v;
}

// ||out − ref|| / ||ref|| for the row-major [m, n] block of `out` with row stride ldc.
template <class T>
double relative_error(const std::vector<T> &out, std::int64_t ldc, const std::vector<double> &ref,
                      std::int64_t m, std::int64_t n) {
  double diff = 0.0, norm = 0.0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double r = ref[static_cast<std::size_t>(i * n + j)];
      const double d = as_double(out[static_cast<std::size_t>(i * ldc + j)]) - r;
      diff += d * d;
      norm += r * r;
    }
  return std::sqrt(diff / norm);
}

// C = op(A) op(B) on the host in fp64; A is [m,k] or stored [k,m], B is [k,n] or stored [n,k].
inline std::vector<double> host_product(const std::vector<double> &a, bool ta, const std::vector<double> &b,
                                        bool tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (std::int64_t l = 0; l < k; ++l) {
        const double av =
            ta ? a[static_cast<std::size_t>(l * m + i)] : a[static_cast<std::size_t>(i * k + l)];
        const double bv =
            tb ? b[static_cast<std::size_t>(j * k + l)] : b[static_cast<std::size_t>(l * n + j)];
        s += av * bv;
      }
      c[static_cast<std::size_t>(i * n + j)] = s;
    }
  return c;
}

} // namespace kibench::test
