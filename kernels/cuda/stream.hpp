// An owned CUDA stream and event. Streams are non-blocking (they never
// wait on the legacy default stream), so an implementation's timed work is
// ordered only by what it enqueues itself.
#pragma once

#include <cuda_runtime_api.h>

namespace kibench::gpu {

class Event;

class Stream {
public:
  // `priority` as cudaStreamCreateWithPriority takes it: lower numbers run
  // first where kernels of several streams wait for SMs; 0 is the default.
  explicit Stream(int priority = 0);
  // The device's highest stream priority (its least number).
  [[nodiscard]] static int highest_priority();
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;

  [[nodiscard]] cudaStream_t get() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  // Blocks until everything enqueued so far has finished; throws on error.
  void synchronize() const;
  // Work enqueued after this waits for `event`'s latest record.
  void wait(const Event &event) const;

private:
  cudaStream_t stream_ = nullptr;
};

class Event {
public:
  // cudaEventDefault records timestamps; pass cudaEventDisableTiming for
  // pure ordering.
  explicit Event(unsigned flags = cudaEventDefault);
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  Event(Event &&other) noexcept;
  Event &operator=(Event &&other) noexcept;

  [[nodiscard]] cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);
  void synchronize() const;
  // Milliseconds from `start` to `end`, both recorded and complete.
  [[nodiscard]] static float elapsed_ms(const Event &start, const Event &end);

private:
  cudaEvent_t event_ = nullptr;
};

} // namespace kibench::gpu
