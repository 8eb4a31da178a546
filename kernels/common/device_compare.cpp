#include "kernels/common/device_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/common/error_reduction.hpp"

namespace kibench::gpu {

namespace {

// Host tensors are staged to the device this many elements at a time, so
// that a host-kept reference (the oracle's gradients in fp64: 2.1 GB at the
// seed) never needs its whole size on a board a lane has nearly filled.
constexpr std::int64_t kStagedElements = std::int64_t{32} << 20;

// A device pointer to elements [first, first + count) of `t`: its own, or a
// staged copy of a host tensor's.
const void *on_device(const TensorRef &t, std::int64_t first, std::int64_t count,
                      DeviceBuffer<std::byte> &staging, cudaStream_t stream) {
  const std::size_t width = element_bytes(t.type);
  const auto *base = static_cast<const std::byte *>(t.data) + static_cast<std::size_t>(first) * width;
  if (t.on_device) return base;
  const std::size_t bytes = static_cast<std::size_t>(count) * width;
  if (staging.bytes() < bytes) staging = DeviceBuffer<std::byte>(DeviceAllocator::process(), bytes);
  CUDA_CHECK(cudaMemcpyAsync(staging.data(), base, bytes, cudaMemcpyHostToDevice, stream));
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

  // Where both sides are on the device the reduction runs once over the
  // whole tensor; a host side is walked in fixed chunks, whose sums add in
  // chunk order (deterministic too).
  const std::int64_t step = out.on_device && ref.on_device ? out.count : kStagedElements;
  DeviceBuffer<std::byte> out_staging, ref_staging;
  ErrorSums sums;
  for (std::int64_t first = 0; first < out.count; first += step) {
    const std::int64_t count = std::min(step, out.count - first);
    const void *out_device = on_device(out, first, count, out_staging, stream);
    const void *ref_device = on_device(ref, first, count, ref_staging, stream);
    const ErrorSums part = reduce_errors(out_device, out.type, ref_device, ref.type, count, stream);
    sums.sum_sq_diff += part.sum_sq_diff;
    sums.sum_sq_ref += part.sum_sq_ref;
    sums.max_abs = std::max(sums.max_abs, part.max_abs);
    sums.nonfinite += part.nonfinite;
  }

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
