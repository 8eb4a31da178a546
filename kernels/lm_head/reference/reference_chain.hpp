// The torch-equivalent op chain of the `reference` implementation: eager
// PyTorch's forward and autograd backward for the seed's module, op by op
// (docs/loss-math.md, "Reference semantics"). reference_chain.cpp lists the
// ops; this header is what the implementation and the memory estimate see.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kernels/lm_head/reference/tensor_arena.hpp"
#include "kernels/lm_head/reference/torch_ops.hpp"

namespace kibench::gpu {

class CublasLt;
struct DeviceInputs;

struct ChainShape {
  std::int64_t tokens = 0, vocab = 0, hidden = 0, student_hidden = 0;
  bool student_bias = false, teacher_bias = false;
  double beta = 0.5, temperature = 1.0, weight_hard = 0.5, weight_soft = 0.5;
  std::int64_t ignore_index = -100;
};

// What autograd keeps between the forward and the backward.
struct SavedTensors {
  Tensor ce_log_probs;      // log_softmax(z_s) of the cross-entropy
  Tensor student_log_probs; // log_softmax(z_s / τ)
  Tensor stacked;           // [2, T, V] input of the logsumexp (mixture)
  Tensor log_mean;          // log m (mixture)
  Tensor student_exp;       // exp(log q) (mixture, reverse KL)
  Tensor student_minus;     // log q − log m (mixture) or log q − log p (reverse KL)
  Tensor teacher_exp;       // exp(log p) (mixture, forward KL)
  bool all_ignored = false; // the harness's early return: loss 0, no graph
  bool valid = false;       // a forward ran and its graph is still here
  void clear() { *this = SavedTensors{}; }
};

// Where the chain reads and writes. In counting mode (arena.counting())
// every pointer may be null: nothing is launched, only sizes are counted.
struct ChainIo {
  const DeviceInputs *inputs = nullptr;
  torch_ops::LossScalars *scalars = nullptr; // device
  __nv_bfloat16 *grad_student_input = nullptr;
  __nv_bfloat16 *grad_student_weight = nullptr;
  __nv_bfloat16 *grad_student_bias = nullptr; // null without bias
};

class ReferenceChain {
public:
  ReferenceChain(const ChainShape &shape, TensorArena &arena, CublasLt *blas, cudaStream_t stream)
      : shape_(shape), arena_(arena), blas_(blas), stream_(stream) {}

  // The loss (into io.scalars->loss); fills `saved` for a backward. Blocks
  // the host once, on torch.all(target == ignore_index), as eager does.
  void forward(const ChainIo &io, SavedTensors &saved);
  // Autograd's backward through the saved graph; consumes `saved`.
  void backward(const ChainIo &io, SavedTensors &saved);

  // Peak bytes of the chain's own tensors for a forward (and backward),
  // computed on the host in counting mode.
  [[nodiscard]] static std::uint64_t predicted_peak_bytes(const ChainShape &shape, bool with_backward);

private:
  template <class F> void launch(F &&f) {
    if (!arena_.counting()) f();
  }

  ChainShape shape_;
  TensorArena &arena_;
  CublasLt *blas_;
  cudaStream_t stream_;
};

} // namespace kibench::gpu
