#include "kernels/cuda/stream.hpp"

#include <cstdio>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace kibench::gpu {

Stream::Stream(int priority) {
  CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
}

int Stream::highest_priority() {
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return greatest;
}

Stream::~Stream() {
  if (stream_ != nullptr && cudaStreamDestroy(stream_) != cudaSuccess)
    std::fputs("kibench: cudaStreamDestroy failed\n", stderr);
}

Stream::Stream(Stream &&other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream &Stream::operator=(Stream &&other) noexcept {
  std::swap(stream_, other.stream_);
  return *this;
}

void Stream::synchronize() const {
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void Stream::wait(const Event &event) const {
  CUDA_CHECK(cudaStreamWaitEvent(stream_, event.get(), 0));
}

Event::Event(unsigned flags) {
  CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
}

Event::~Event() {
  if (event_ != nullptr && cudaEventDestroy(event_) != cudaSuccess)
    std::fputs("kibench: cudaEventDestroy failed\n", stderr);
}

Event::Event(Event &&other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event &Event::operator=(Event &&other) noexcept {
  std::swap(event_, other.event_);
  return *this;
}

void Event::record(cudaStream_t stream) {
  CUDA_CHECK(cudaEventRecord(event_, stream));
}

void Event::synchronize() const {
  CUDA_CHECK(cudaEventSynchronize(event_));
}

float Event::elapsed_ms(const Event &start, const Event &end) {
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, end.event_));
  return ms;
}

} // namespace kibench::gpu
