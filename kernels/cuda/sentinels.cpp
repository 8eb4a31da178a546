#include "kernels/cuda/sentinels.hpp"
#include "kernels/cuda/sentinels_kernel.hpp"

#include <chrono>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include "kernels/cuda/cublaslt.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/stream.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::gpu {

namespace {

// Median milliseconds of `body` enqueued on `stream` between two events.
template <typename Body> double median_event_ms(cudaStream_t stream, int repetitions, Body &&body) {
  Event start, end;
  std::vector<double> ms;
  for (int r = 0; r < repetitions; ++r) {
    start.record(stream);
    body();
    end.record(stream);
    end.synchronize();
    ms.push_back(Event::elapsed_ms(start, end));
  }
  return stats::median(std::move(ms));
}

} // namespace

calibration::SentinelSet gpu_sentinels() {
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp props{};
  CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  calibration::SentinelSet set;
  set.device = fmt::format("{} (GPU 0)", props.name);
  Stream stream;

  // Launch: host wall time of an empty kernel's launch and completion.
  std::vector<double> us;
  for (int r = 0; r < 201; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    launch_empty_kernel(stream.get());
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  set.readings.push_back({"launch", "us", stats::median(std::move(us)), false});

  DeviceAllocator allocator("calibration sentinels");
  {
    constexpr std::size_t kBytes = std::size_t{256} << 20;
    DeviceBuffer<unsigned char> from(allocator, kBytes), to(allocator, kBytes);
    CUDA_CHECK(cudaMemsetAsync(from.data(), 1, kBytes, stream.get()));
    const double ms = median_event_ms(stream.get(), 9, [&] {
      CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), kBytes, cudaMemcpyDeviceToDevice, stream.get()));
    });
    // Read and written: twice the bytes move.
    set.readings.push_back({"copy", "GB/s", 2.0 * static_cast<double>(kBytes) / (ms * 1e-3) / 1e9, true});
  }
  {
    constexpr std::int64_t kN = 4096;
    DeviceBuffer<std::uint16_t> a(allocator, kN * kN), b(allocator, kN * kN), c(allocator, kN * kN);
    // bf16 0x3C00 = 0.0078125: small, exact operands keep the sums finite.
    CUDA_CHECK(cudaMemsetAsync(a.data(), 0x3C, a.bytes(), stream.get()));
    CUDA_CHECK(cudaMemsetAsync(b.data(), 0x3C, b.bytes(), stream.get()));
    CublasLt blas(allocator);
    RowMajorGemm gemm;
    gemm.m = gemm.n = gemm.k = kN;
    gemm.a = a.data();
    gemm.lda = kN;
    gemm.b = b.data();
    gemm.transpose_b = true;
    gemm.ldb = kN;
    gemm.c = c.data();
    gemm.ldc = kN;
    blas.matmul(gemm, stream.get()); // plans and warms up, untimed
    const double ms = median_event_ms(stream.get(), 9, [&] { blas.matmul(gemm, stream.get()); });
    const double flops = 2.0 * static_cast<double>(kN) * kN * kN;
    set.readings.push_back({"compute", "TFLOP/s", flops / (ms * 1e-3) / 1e12, true});
  }
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return set;
}

} // namespace kibench::gpu
