#include "kernels/lm_head/vocab_parallel/nccl_communicator.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace kibench::vocab_parallel {

NcclCommunicator::NcclCommunicator(const gpu::Nccl &nccl, std::vector<int> devices)
    : nccl_(nccl), devices_(std::move(devices)) {
  if (devices_.empty()) throw std::invalid_argument("NcclCommunicator: no devices");
  comms_ = nccl_.init_all(devices_);
}

NcclCommunicator::~NcclCommunicator() {
  for (gpu::Nccl::Comm comm : comms_) nccl_.destroy(comm);
}

void NcclCommunicator::all_reduce(const std::vector<RankBuffer> &local, gpu::Nccl::Op op) {
  if (local.size() != comms_.size())
    throw std::invalid_argument(
        fmt::format("NcclCommunicator: {} buffers for {} ranks", local.size(), comms_.size()));
  std::vector<float *> buffers;
  std::vector<cudaStream_t> streams;
  for (const RankBuffer &b : local) {
    if (b.data.size() != local.front().data.size())
      throw std::invalid_argument("NcclCommunicator: buffers of different sizes");
    buffers.push_back(b.data.data());
    streams.push_back(b.stream);
  }
  nccl_.all_reduce(comms_, buffers, streams, local.front().data.size(), op);
}

void NcclCommunicator::all_reduce_max(const std::vector<RankBuffer> &local) {
  all_reduce(local, gpu::Nccl::Op::max);
}

void NcclCommunicator::all_reduce_sum(const std::vector<RankBuffer> &local) {
  all_reduce(local, gpu::Nccl::Op::sum);
}

void NcclCommunicator::check_async_errors() const {
  for (std::size_t r = 0; r < comms_.size(); ++r)
    if (const std::string error = nccl_.async_error(comms_[r]); !error.empty())
      throw std::runtime_error(fmt::format("NCCL, rank {} (device {}): {}", r, devices_[r], error));
}

} // namespace kibench::vocab_parallel
