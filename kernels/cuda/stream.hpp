// An owned CUDA stream and event. Streams are non-blocking (they never
// wait on the legacy default stream), so an implementation's timed work is
// ordered only by what it enqueues itself.
#pragma once

#include <cuda_runtime_api.h>

namespace kibench::gpu {

class Stream {
public:
  Stream();
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;

  [[nodiscard]] cudaStream_t get() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  // Blocks until everything enqueued so far has finished; throws on error.
  void synchronize() const;

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
