// PowerMonitor on NVML's board energy counter
// (nvmlDeviceGetTotalEnergyConsumption), read by a background thread about
// once a millisecond together with the SM clock. The counter advances in
// steps at the sensor's update rate, so the harness measures power between
// steps, never between arbitrary reads (harness/sustained.cpp).
#pragma once

#include <memory>
#include <vector>

#include "lib/implementation/power_monitor.hpp"

namespace kibench::gpu {

// nullptr when NVML is missing or the device has no energy counter.
std::unique_ptr<PowerMonitor> make_nvml_power_monitor(int device);
// The boards of several devices as one: the sum of their energy counters
// and the lowest of their SM clocks at each reading (a multi-GPU pass's
// joules); nullptr unless every one has a counter.
std::unique_ptr<PowerMonitor> make_nvml_power_monitor(std::vector<int> devices);

} // namespace kibench::gpu
