// The collectives of the vocabulary-parallel loss over device buffers, as
// Communicator (communicator.hpp) has them over host ones: every rank's
// buffer becomes the element-wise maximum or sum over all ranks, enqueued
// on a stream. A communicator over NCCL would hand its one rank's buffer
// to ncclAllReduce (ncclMax, ncclSum on ncclFloat); the single-GPU
// emulation drives every rank in turn and hands in all of them
// (LocalDeviceCommunicator). The sharded algorithm calls the same two
// functions either way.
#pragma once

#include <span>
#include <vector>

#include <cuda_runtime_api.h>

namespace kibench::vocab_parallel {

class DeviceCommunicator {
public:
  virtual ~DeviceCommunicator() = default;
  // Ranks in the group, over all processes.
  [[nodiscard]] virtual int ranks() const = 0;
  // `local[j]` is the device buffer of the j-th rank this process drives;
  // all of one size. Enqueued on `stream`, which orders every rank's work.
  virtual void all_reduce_max(const std::vector<std::span<float>> &local, cudaStream_t stream) = 0;
  virtual void all_reduce_sum(const std::vector<std::span<float>> &local, cudaStream_t stream) = 0;
};

// Every rank on this device: local_reduction_schedule's steps (rank 0's
// buffer combined with each other rank's in rank order, then copied back
// to them), one kernel or device-to-device copy per step.
class LocalDeviceCommunicator final : public DeviceCommunicator {
public:
  explicit LocalDeviceCommunicator(int ranks);
  [[nodiscard]] int ranks() const override { return ranks_; }
  void all_reduce_max(const std::vector<std::span<float>> &local, cudaStream_t stream) override;
  void all_reduce_sum(const std::vector<std::span<float>> &local, cudaStream_t stream) override;

private:
  int ranks_;
};

} // namespace kibench::vocab_parallel
