// The collectives of the vocabulary-parallel loss over device buffers, as
// Communicator (communicator.hpp) has them over host ones: every rank's
// buffer becomes the element-wise maximum or sum over all ranks, enqueued
// on the ranks' streams. NcclCommunicator (nccl_communicator.hpp) hands
// every GPU's buffer to ncclAllReduce (ncclMax, ncclSum on fp32) in one
// group; the single-GPU emulation drives every rank in turn on one stream
// (LocalDeviceCommunicator). The sharded algorithm calls the same two
// functions either way.
#pragma once

#include <span>
#include <vector>

#include <cuda_runtime_api.h>

namespace kibench::vocab_parallel {

// One rank's operand of a collective: its device buffer, and the stream
// (on that buffer's device) the collective is ordered on.
struct RankBuffer {
  std::span<float> data;
  cudaStream_t stream = nullptr;
};

class DeviceCommunicator {
public:
  virtual ~DeviceCommunicator() = default;
  // Ranks in the group, over all processes.
  [[nodiscard]] virtual int ranks() const = 0;
  // `local[j]` is the buffer of the j-th rank this process drives; all of
  // one size. Enqueued on each rank's stream: work enqueued there after
  // the call sees the result.
  virtual void all_reduce_max(const std::vector<RankBuffer> &local) = 0;
  virtual void all_reduce_sum(const std::vector<RankBuffer> &local) = 0;
};

// Every rank on this device: local_reduction_schedule's steps (rank 0's
// buffer combined with each other rank's in rank order, then copied back
// to them), one kernel or device-to-device copy per step, on the one
// stream every rank's buffer names (std::invalid_argument otherwise).
class LocalDeviceCommunicator final : public DeviceCommunicator {
public:
  explicit LocalDeviceCommunicator(int ranks);
  [[nodiscard]] int ranks() const override { return ranks_; }
  void all_reduce_max(const std::vector<RankBuffer> &local) override;
  void all_reduce_sum(const std::vector<RankBuffer> &local) override;

private:
  int ranks_;
};

} // namespace kibench::vocab_parallel
