// DeviceCommunicator over NCCL, for one process that drives every rank's
// GPU (rank r on CUDA device r of the run): ncclCommInitAll makes the
// communicators, and each collective is one NCCL group of the ranks'
// in-place ncclAllReduce calls, each on its rank's stream. One process and
// one thread, not one process per GPU: kibench's harness times every
// implementation of a run in the same rounds from one host loop, and the
// sharded pass needs no host work between its kernels, so issuing every
// GPU's work from one thread costs no overlap.
#pragma once

#include <vector>

#include "kernels/cuda/nccl.hpp"
#include "kernels/lm_head/vocab_parallel/device_communicator.hpp"

namespace kibench::vocab_parallel {

class NcclCommunicator final : public DeviceCommunicator {
public:
  // Rank r on devices[r]. Throws with NCCL's reason.
  NcclCommunicator(const gpu::Nccl &nccl, std::vector<int> devices);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  [[nodiscard]] int ranks() const override { return static_cast<int>(devices_.size()); }
  [[nodiscard]] const std::vector<int> &devices() const { return devices_; }
  void all_reduce_max(const std::vector<RankBuffer> &local) override;
  void all_reduce_sum(const std::vector<RankBuffer> &local) override;
  // Throws std::runtime_error when a communicator reports an error an
  // earlier asynchronous operation left.
  void check_async_errors() const;

private:
  void all_reduce(const std::vector<RankBuffer> &local, gpu::Nccl::Op op);

  const gpu::Nccl &nccl_;
  std::vector<int> devices_;
  std::vector<gpu::Nccl::Comm> comms_;
};

} // namespace kibench::vocab_parallel
