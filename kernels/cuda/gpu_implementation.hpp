// What every GPU implementation holds the same way: the device, a stream,
// an allocator for its own buffers, and the workload's inputs on the
// device. The harness's L2 flush and power-state load are its Device's
// (gpu_device.hpp), on this stream, with allocators of their own.
// Subclasses write only what is theirs: prepare_device / run / outputs /
// release_device.
//
// Lifetimes: the allocator is a member of this base, so every buffer a
// subclass holds is destroyed (returned to it) before the allocator goes;
// a subclass's destructor calls release() so its buffers are freed only
// after the stream has finished with them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_inputs.hpp"
#include "kernels/cuda/stream.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench::gpu {

class GpuImplementation : public Implementation {
public:
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] bool needs_gpu() const final { return true; }

  // Binds the device inputs, makes the stream and the flush, then
  // prepare_device(workload).
  void prepare(const Workload &workload, InputSet &inputs) final;
  // Waits for the stream, then release_device(); safe to call twice.
  void release() final;

  // This GPU and stream (gpu_device.hpp): CUDA events with the SM clock
  // around each sample, the board's energy counter, the L2 flush and the
  // power-state load on the stream.
  std::unique_ptr<Device> open_device() final;
  // Inputs as generated, outputs as allocated with MemoryTag::output,
  // workspace: the allocator's high-water mark less the outputs; all zero
  // once released.
  [[nodiscard]] MemoryUse memory() const override;

  ~GpuImplementation() override;
  GpuImplementation(const GpuImplementation &) = delete;
  GpuImplementation &operator=(const GpuImplementation &) = delete;

protected:
  // `caching`: the allocator keeps freed blocks for reuse, as PyTorch's does.
  explicit GpuImplementation(std::string name, bool caching_allocator = false);

  // Allocates with allocator(), enqueues on stream(); not timed.
  virtual void prepare_device(const Workload &workload) = 0;
  // Frees everything prepare_device made (the stream has finished).
  virtual void release_device() = 0;

  [[nodiscard]] DeviceAllocator &allocator() { return allocator_; }
  [[nodiscard]] const DeviceAllocator &allocator() const { return allocator_; }
  [[nodiscard]] Stream &stream() { return *stream_; }
  [[nodiscard]] const DeviceInputs &inputs() const { return *inputs_; }
  [[nodiscard]] const Workload &workload() const { return *workload_; }
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] bool prepared() const { return inputs_ != nullptr; }
  // Throws std::logic_error naming the implementation when not prepared.
  void require_prepared() const;

  // Fills buffers with 0xFF bytes on the stream: NaN in bf16, fp32 and fp64
  // alike, so an element a run does not write fails the check.
  template <typename... Buffers> void poison(Buffers &...buffers) {
    (poison_bytes(buffers.data(), buffers.bytes()), ...);
  }

  // The loss and, where the last pass computed them, the gradient buffers
  // (an empty bias buffer stays absent).
  template <typename Input, typename Weight, typename Bias>
  static OutputView output_view(double loss, bool with_gradients, const Input &grad_input,
                                const Weight &grad_weight, const Bias &grad_bias) {
    OutputView view;
    view.loss = loss;
    if (!with_gradients) return view;
    view.grad_student_input = grad_input.view();
    view.grad_student_weight = grad_weight.view();
    if (!grad_bias.empty()) view.grad_student_bias = grad_bias.view();
    return view;
  }

private:
  void poison_bytes(void *data, std::size_t bytes);

  std::string name_;
  // Declared first: destroyed after every buffer a subclass holds.
  DeviceAllocator allocator_;
  // Made in prepare(): constructing an implementation touches no GPU.
  std::unique_ptr<Stream> stream_;
  DeviceInputs *inputs_ = nullptr;
  const Workload *workload_ = nullptr;
  int device_ = 0;
};

} // namespace kibench::gpu
