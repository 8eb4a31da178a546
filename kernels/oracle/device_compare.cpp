#include "kernels/oracle/device_compare.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/oracle/error_reduction.hpp"

namespace kibench::gpu {

namespace {

// A device pointer for `t`: its own, or a staged copy of a host tensor.
const void *on_device(const TensorRef &t, DeviceBuffer<std::byte> &staging, cudaStream_t stream) {
  if (t.on_device) return t.data;
  const std::size_t bytes = static_cast<std::size_t>(t.count) * element_bytes(t.type);
  staging = DeviceBuffer<std::byte>(DeviceAllocator::process(), bytes);
  CUDA_CHECK(cudaMemcpyAsync(staging.data(), t.data, bytes, cudaMemcpyHostToDevice, stream));
  return staging.data();
}

} // namespace

ErrorStats compare_device(std::string output, const TensorRef &out, const TensorRef &ref,
                          cudaStream_t stream) {
  if (out.count != ref.count)
    throw std::invalid_argument(fmt::format("compare_device({}): {} elements against a reference of {}",
                                            output, out.count, ref.count));
  ErrorStats stats;
  stats.output = std::move(output);
  stats.count = out.count;
  if (out.count == 0) return stats;
  if (out.data == nullptr || ref.data == nullptr)
    throw std::invalid_argument(fmt::format("compare_device({}): null tensor", stats.output));

  DeviceBuffer<std::byte> out_staging, ref_staging;
  const void *out_device = on_device(out, out_staging, stream);
  const void *ref_device = on_device(ref, ref_staging, stream);
  const ErrorSums sums = reduce_errors(out_device, out.type, ref_device, ref.type, out.count, stream);

  stats.max_abs_error = sums.max_abs;
  stats.ref_l2_norm = std::sqrt(sums.sum_sq_ref);
  stats.nonfinite = sums.nonfinite;
  const double diff_norm = std::sqrt(sums.sum_sq_diff);
  if (stats.ref_l2_norm > 0.0)
    stats.rel_l2_error = diff_norm / stats.ref_l2_norm;
  else
    stats.rel_l2_error = diff_norm == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return stats;
}

} // namespace kibench::gpu
