// The host as a Device: wall-clock timing of a CPU sample,
// std::chrono::steady_clock around a run that is complete when it returns
// (the CPU implementations are synchronous); no cache to flush, no board to
// condition.
#pragma once

#include <chrono>
#include <memory>

#include "lib/implementation/device.hpp"

namespace kibench {

class HostTimer final : public SampleTimer {
public:
  void start() override;
  void stop() override;
  // Throws std::logic_error unless start() and then stop() were called.
  double elapsed_ns() override;
  [[nodiscard]] std::string name() const override { return "steady_clock"; }

private:
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point stop_{};
  bool started_ = false;
  bool stopped_ = false;
};

class HostDevice final : public Device {
public:
  std::unique_ptr<SampleTimer> make_timer() override { return std::make_unique<HostTimer>(); }
};

} // namespace kibench
