// What the host implementations share: they need no GPU, time samples with
// the steady clock, and refuse a workload past the CPU limits given the
// bytes they would hold besides the inputs (cpu_common.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/cpu/cpu_common.hpp"
#include "kernels/cpu/host_device.hpp"
#include "lib/implementation/implementation.hpp"

namespace kibench::cpu {

class HostImplementation : public Implementation {
public:
  [[nodiscard]] std::string name() const final { return name_; }
  [[nodiscard]] bool needs_gpu() const final { return false; }
  [[nodiscard]] std::optional<std::string> unsupported(const Workload &w) const override {
    return too_big_reason(w, planned_own_bytes(w));
  }
  std::unique_ptr<Device> open_device() final { return std::make_unique<HostDevice>(); }

protected:
  explicit HostImplementation(std::string name) : name_(std::move(name)) {}
  // Bytes the implementation would hold besides the inputs for `w`.
  [[nodiscard]] virtual std::uint64_t planned_own_bytes(const Workload &w) const = 0;

private:
  std::string name_;
};

} // namespace kibench::cpu
