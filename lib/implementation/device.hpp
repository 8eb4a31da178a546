// The device an implementation's samples run on, as the harness uses it:
// the timer of its samples, its board's energy counter, the cache eviction
// before a cold sample, and --power-state's wait and load. These are the
// device's, not the implementation's (NVBench keeps them in its state,
// apart from the benchmark): an implementation only says where it runs, by
// opening its Device (Implementation::open_device(), after prepare()); the
// harness owns that object while it times the implementation and drops it
// before release().
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "lib/implementation/power_monitor.hpp"

namespace kibench {

// Times one sample. The harness calls start(), Implementation::run(), stop().
class SampleTimer {
public:
  virtual ~SampleTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Blocks until the sample is complete; nanoseconds between start and stop.
  virtual double elapsed_ns() = 0;
  // SM clock in MHz observed around the sample, if the device reports it.
  virtual std::optional<double> clock_mhz() { return std::nullopt; }
  // Board power in watts as the sample ended (the instantaneous reading,
  // not a trailing average), if the device reports it.
  virtual std::optional<double> power_w() { return std::nullopt; }
  // e.g. "cuda_events" or "steady_clock".
  [[nodiscard]] virtual std::string name() const = 0;
};

class Device {
public:
  virtual ~Device() = default;
  // The timer that measures this device's samples.
  virtual std::unique_ptr<SampleTimer> make_timer() = 0;
  // Reads the board's energy; nullptr where there is no such counter (the
  // host, a GPU without NVML).
  virtual std::unique_ptr<PowerMonitor> make_power_monitor() { return nullptr; }
  // Evicts caches before a cold sample (a GPU's L2). Default: nothing.
  virtual void flush_caches() {}
  // For --power-state (lib/harness/power_conditioner.hpp), before a timed
  // sample: waits until the device has finished all work enqueued so far.
  // Default: nothing (the host runs synchronously).
  virtual void wait_idle() {}
  // Enqueues `seconds` of work that holds the board at its power cap, ahead
  // of the next sample on the stream the implementation runs on. Only GPUs
  // are loaded.
  virtual void enqueue_power_load(double /*seconds*/) {
    throw std::logic_error("the host has no board to load before a sample");
  }
};

} // namespace kibench
