#include "kernels/lm_head/vocab_parallel/device_communicator.hpp"

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/lm_head/vocab_parallel/device_combine.hpp"
#include "kernels/lm_head/vocab_parallel/local_reduction.hpp"

namespace kibench::vocab_parallel {

namespace {

using Combine = void (*)(float *, const float *, std::size_t, cudaStream_t);

void all_reduce(const std::vector<RankBuffer> &local, int ranks, Combine combine) {
  if (static_cast<int>(local.size()) != ranks)
    throw std::invalid_argument("LocalDeviceCommunicator: " + std::to_string(local.size()) + " buffers for " +
                                std::to_string(ranks) + " ranks");
  const std::size_t n = local.front().data.size();
  const cudaStream_t stream = local.front().stream;
  for (const RankBuffer &buffer : local) {
    if (buffer.data.size() != n)
      throw std::invalid_argument("LocalDeviceCommunicator: buffers of different sizes");
    if (buffer.stream != stream)
      throw std::invalid_argument("LocalDeviceCommunicator: the ranks' buffers name different streams");
  }
  if (n == 0) return;
  float *root = local.front().data.data();
  const LocalReductionSchedule schedule = local_reduction_schedule(ranks);
  for (const int r : schedule.combine_from) combine(root, local[r].data.data(), n, stream);
  for (const int r : schedule.copy_to)
    CUDA_CHECK(cudaMemcpyAsync(local[r].data.data(), root, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

} // namespace

LocalDeviceCommunicator::LocalDeviceCommunicator(int ranks) : ranks_(ranks) {
  if (ranks < 1)
    throw std::invalid_argument("LocalDeviceCommunicator: " + std::to_string(ranks) + " ranks (at least 1)");
}

void LocalDeviceCommunicator::all_reduce_max(const std::vector<RankBuffer> &local) {
  all_reduce(local, ranks_, combine_max);
}

void LocalDeviceCommunicator::all_reduce_sum(const std::vector<RankBuffer> &local) {
  all_reduce(local, ranks_, combine_sum);
}

} // namespace kibench::vocab_parallel
