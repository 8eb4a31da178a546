// What the run pipeline needs from the machine: implementations by name,
// the environment, and a way to compare outputs wherever they live. The CUDA
// build provides it (kernels/machine/backend.cpp), so lib/ stays free of CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/calibration/sentinels.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/environment/clock_control.hpp"
#include "lib/environment/environment.hpp"
#include "lib/environment/power_telemetry.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/inputs/input_set.hpp"

namespace kibench {

// A device copy of a host tensor; the memory is freed with `owner`.
struct DeviceCopy {
  std::shared_ptr<void> owner;
  TensorRef view;
};

struct ImplementationEntry {
  std::string name;
  std::string summary;
  bool needs_gpu = false;
  bool is_oracle = false;
  bool is_diagnostic = false; // checks or dissects another lane (kernels/registry.hpp)
};

// GPU 0's memory as a run plans it: what the board has, what is free now,
// and what kibench itself holds there (inputs, kept results, caches).
struct DeviceMemory {
  std::string board;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t kibench_bytes = 0;
};

class Backend {
public:
  virtual ~Backend() = default;
  // nullopt when a GPU is usable; else why not ("no CUDA driver found", ...).
  [[nodiscard]] virtual std::optional<std::string> gpu_unavailable_reason() const = 0;
  [[nodiscard]] virtual EnvironmentFacts environment() const = 0;
  // The GPUs a run holds (kibench run --gpus): CUDA devices 0 .. n − 1.
  // Single-GPU implementations run on device 0; a multi-GPU one spans them.
  [[nodiscard]] virtual int run_gpus() const { return 1; }
  // The GPUs this machine has (0 without a usable one).
  [[nodiscard]] virtual int gpu_count() const { return 0; }
  // GPU 0's memory now; nullopt without a usable GPU.
  [[nodiscard]] virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }
  // `host` copied to GPU 0; nullopt where there is no device.
  [[nodiscard]] virtual std::optional<DeviceCopy> copy_to_device(const TensorRef & /*host*/) const {
    return std::nullopt;
  }
  // Every existing copy of every input tensor, fingerprinted (the host
  // copy here; a GPU backend adds the device copy).
  [[nodiscard]] virtual std::vector<InputFingerprint> input_fingerprints(InputSet &inputs) const {
    return inputs.host_fingerprints();
  }
  // Every existing copy generated again in place: undoes a lane's writes.
  virtual void restore_inputs(InputSet &inputs) const { inputs.restore_host(); }
  // The calibration sentinels (lib/calibration/sentinels.hpp) of the device
  // the run's lanes use: the host's by default.
  [[nodiscard]] virtual calibration::SentinelSet run_sentinels() const { return calibration::host_sentinels(); }
  [[nodiscard]] virtual std::vector<ImplementationEntry> implementations() const = 0;
  // nullptr for an unknown name.
  [[nodiscard]] virtual std::unique_ptr<Implementation> make(std::string_view name) const = 0;
  // Errors of every output of `out` against the oracle's `ref`.
  // The bytes of a tensor wherever it lives (for --save-tensors).
  [[nodiscard]] virtual std::vector<unsigned char> to_host_bytes(const TensorRef &tensor) const = 0;
  [[nodiscard]] virtual std::vector<ErrorStats> compare(const OutputView &out, const OutputView &ref,
                                                        bool with_gradients) const = 0;
  // The GPU's clock state and lock (--lock-clocks); nullptr where there is
  // no GPU or no NVML to ask.
  [[nodiscard]] virtual std::unique_ptr<ClockControl> clock_control() const { return nullptr; }
  // The GPU's SM clock and board power now (--power-state rested); nullptr
  // where there is no GPU or no NVML to ask.
  [[nodiscard]] virtual std::unique_ptr<PowerTelemetry> power_telemetry() const { return nullptr; }
};

} // namespace kibench
