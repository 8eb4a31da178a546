// (A test model: the host collectives the sharded-pass model of
// sharded_loss.hpp runs on.)
// The collectives a vocabulary-parallel loss needs, over the buffers of the
// ranks this process drives: every rank's buffer becomes the element-wise
// maximum or sum over all ranks. One process per GPU hands in its one
// rank's buffer (NCCL all-reduces, the other ranks in other processes); the
// single-device emulation drives every rank in turn and hands in all of
// them (LocalCommunicator) — the algorithm calls the same functions either
// way, so the emulation tests the math the sharded run does.
#pragma once

#include <span>
#include <vector>

namespace kibench::vocab_parallel {

class Communicator {
public:
  virtual ~Communicator() = default;
  // Ranks in the group, over all processes.
  [[nodiscard]] virtual int ranks() const = 0;
  // `local[j]` is the buffer of the j-th rank this process drives; all of
  // one size.
  virtual void all_reduce_max(const std::vector<std::span<double>> &local) = 0;
  virtual void all_reduce_sum(const std::vector<std::span<double>> &local) = 0;
};

// Every rank in this process: the reductions run on the host over the
// ranks' buffers in rank order (a fixed order: the same bits every run).
class LocalCommunicator final : public Communicator {
public:
  explicit LocalCommunicator(int ranks) : ranks_(ranks) {}
  [[nodiscard]] int ranks() const override { return ranks_; }
  void all_reduce_max(const std::vector<std::span<double>> &local) override;
  void all_reduce_sum(const std::vector<std::span<double>> &local) override;

private:
  int ranks_;
};

} // namespace kibench::vocab_parallel
