// Checks the [gpu] tests of the distillation loss share: a host vector as
// the device comparator's reference, a scalar's relative error, and one
// gradient on the device against the oracle's.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "kernels/common/device_compare.hpp"
#include "lib/correctness/correctness.hpp"
#include "lib/implementation/tensor_ref.hpp"

namespace kibench::test {

inline TensorRef host_view(const std::vector<double> &v) {
  return TensorRef{v.data(), ElementType::fp64, static_cast<std::int64_t>(v.size()), false};
}

// |out − ref| / |ref|; 0 where both are 0, infinite where only ref is.
inline double relative_error(double out, double ref) {
  if (ref == 0.0) return out == 0.0 ? 0.0 : INFINITY;
  return std::abs(out - ref) / std::abs(ref);
}

// One gradient on the device against the oracle's: every element written
// and finite, within `bound` relative L2 error (exactly zero where the
// oracle is zero); a bound of 0 reports the error without holding it to one.
inline ErrorStats check_device_gradient(const char *name, const TensorRef &out, const std::vector<double> &ref,
                                        double bound) {
  REQUIRE_FALSE(out.empty());
  REQUIRE(out.on_device);
  const ErrorStats e = gpu::compare_device(name, out, host_view(ref));
  INFO(fmt::format("{}: rel L2 {:.3e}, max abs {:.3e}, |ref| {:.3e}, nonfinite {}", name, e.rel_l2_error,
                   e.max_abs_error, e.ref_l2_norm, e.nonfinite));
  CHECK(e.count == static_cast<std::int64_t>(ref.size()));
  CHECK(e.nonfinite == 0);
  if (e.ref_l2_norm == 0.0) {
    CHECK(e.max_abs_error == 0.0);
  } else if (bound > 0.0) {
    CHECK(e.rel_l2_error <= bound);
  }
  return e;
}

} // namespace kibench::test
