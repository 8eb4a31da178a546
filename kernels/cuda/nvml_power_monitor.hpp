// PowerMonitor on NVML's board energy counter
// (nvmlDeviceGetTotalEnergyConsumption), read by a background thread about
// once a millisecond together with the SM clock. The counter advances in
// steps at the sensor's update rate, so the harness measures power between
// steps, never between arbitrary reads (harness/sustained.cpp).
#pragma once

#include <memory>

#include "lib/implementation/power_monitor.hpp"

namespace kibench::gpu {

// nullptr when NVML is missing or the device has no energy counter.
std::unique_ptr<PowerMonitor> make_nvml_power_monitor(int device);

} // namespace kibench::gpu
