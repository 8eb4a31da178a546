#include "kernels/cpu/host_device.hpp"

#include <stdexcept>

namespace kibench {

void HostTimer::start() {
  started_ = true;
  stopped_ = false;
  start_ = std::chrono::steady_clock::now();
}

void HostTimer::stop() {
  stop_ = std::chrono::steady_clock::now();
  stopped_ = started_;
}

double HostTimer::elapsed_ns() {
  if (!stopped_) throw std::logic_error("HostTimer: elapsed_ns() before start() and stop()");
  return std::chrono::duration<double, std::nano>(stop_ - start_).count();
}

} // namespace kibench
