// A read-only view of one tensor on the host or on the device. Kept apart
// from implementation.hpp so that CUDA sources can use it without the JSON
// headers (nvcc's front end rejects json/value.hpp's incomplete-type members).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kibench {

enum class ElementType { bf16, fp32, fp64 };

constexpr std::size_t element_bytes(ElementType type) {
  switch (type) {
  case ElementType::bf16:
    return 2;
  case ElementType::fp32:
    return 4;
  case ElementType::fp64:
    return 8;
  }
  return 8;
}

// A read-only view of one result tensor, on the host or on the device.
struct TensorRef {
  const void *data = nullptr;
  ElementType type = ElementType::fp32;
  std::int64_t count = 0;
  bool on_device = false;
  [[nodiscard]] bool empty() const { return data == nullptr || count == 0; }
};

} // namespace kibench
