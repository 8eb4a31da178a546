// For the harness tests: an Implementation that holds and checks nothing
// (a test derives from it and gives run() and name(), and its Device where
// the host's steady clock will not do), a Device made of a test's own
// timer, monitor and hooks, and settings that take an exact number of warm
// samples.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/cpu/host_device.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/json/value.hpp"

namespace kibench::test {

// A Device whose timer comes from `timer`, and, where a test sets them, its
// power monitor and what its flush, idle wait and load do.
class TestDevice final : public Device {
public:
  explicit TestDevice(std::function<std::unique_ptr<SampleTimer>()> timer) : timer_(std::move(timer)) {}
  std::function<std::unique_ptr<PowerMonitor>()> monitor = [] { return nullptr; };
  std::function<void()> flush = [] {};
  std::function<void()> idle = [] {};
  std::function<void(double)> load = [](double) { throw std::logic_error("a test device with no load"); };

  std::unique_ptr<SampleTimer> make_timer() override { return timer_(); }
  std::unique_ptr<PowerMonitor> make_power_monitor() override { return monitor(); }
  void flush_caches() override { flush(); }
  void wait_idle() override { idle(); }
  void enqueue_power_load(double seconds) override { load(seconds); }

private:
  std::function<std::unique_ptr<SampleTimer>()> timer_;
};

class NullImplementation : public Implementation {
public:
  [[nodiscard]] RevisionFacts revision() const override { return {}; }
  [[nodiscard]] bool needs_gpu() const override { return false; }
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &) const override {
    return std::nullopt;
  }
  void prepare(const Workload &, InputSet &) override {}
  void poison_outputs() override {}
  OutputView outputs() override { return {}; }
  [[nodiscard]] MemoryUse memory() const override { return {}; }
  // The host's: the steady clock, nothing to flush or load.
  std::unique_ptr<Device> open_device() override { return std::make_unique<HostDevice>(); }
  void release() override {}
};

// Exactly `samples` samples after `warmup` untimed runs, caches left warm,
// then a sustained phase of `sustained_s` seconds (0: none).
inline ProtocolSettings exact_samples(std::size_t samples, std::size_t warmup, double sustained_s) {
  ProtocolSettings s;
  s.cold = false;
  s.warmup_runs = warmup;
  s.min_samples = samples;
  s.max_samples = samples;
  s.min_time_s = 0.0;
  s.sustained_time_s = sustained_s;
  return s;
}

} // namespace kibench::test
