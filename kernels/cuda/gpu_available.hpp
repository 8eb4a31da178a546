// Whether this process can use a GPU. On a machine without a driver or a
// device (CI), cudaGetDeviceCount fails; that means "no GPU", with the
// runtime's reason, never a crash. Probed once per process.
#pragma once

#include <string>

namespace kibench::gpu {

struct GpuAvailability {
  bool available = false;
  int device_count = 0;
  std::string reason; // why not, when !available
};

const GpuAvailability &gpu_availability();
inline bool gpu_available() {
  return gpu_availability().available;
}

} // namespace kibench::gpu
