// What jsd's two host implementations (cpu-fp64, cpu-reference) hold the
// same way: the loss and a [T, V] gradient of `Element` (double or float),
// the refusal of a backward-only pass, poisoning, and the output view.
// Each writes its own prepare() and run(), and the memory it reports.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/host_implementation.hpp"
#include "kernels/jsd/jsd_passes.hpp"

namespace kibench::cpu {

template <typename Element> class JsdHostImplementation : public HostImplementation {
  static_assert(std::is_same_v<Element, double> || std::is_same_v<Element, float>);

public:
  [[nodiscard]] std::optional<std::string> unsupported_for(const Workload &w, Pass pass) const override {
    if (auto refusal = jsd_pass_refusal(pass)) return refusal;
    return unsupported(w);
  }

  void poison_outputs() override {
    loss_ = std::numeric_limits<double>::quiet_NaN();
    std::fill(gradient_.begin(), gradient_.end(), std::numeric_limits<Element>::quiet_NaN());
  }

  // The loss, and dX where the last pass computed it.
  OutputView outputs() override {
    OutputView view;
    view.loss = loss_;
    if (has_gradient_) {
      constexpr ElementType type = std::is_same_v<Element, double> ? ElementType::fp64 : ElementType::fp32;
      view.grad_student_input = TensorRef{gradient_.data(), type, static_cast<std::int64_t>(gradient_.size()), false};
    }
    return view;
  }

protected:
  using HostImplementation::HostImplementation;

  // The outputs of `elements` gradient entries, allocated poisoned (one
  // fill: prepare() of the largest jsd workloads holds 10^9 of them).
  void allocate_outputs(std::size_t elements) {
    gradient_.assign(elements, std::numeric_limits<Element>::quiet_NaN());
    loss_ = std::numeric_limits<double>::quiet_NaN();
  }

  // What release() frees and resets of the above.
  void release_outputs() {
    std::vector<Element>().swap(gradient_);
    input_bytes_ = 0;
    loss_ = std::numeric_limits<double>::quiet_NaN();
    prepared_ = has_gradient_ = false;
  }

  std::vector<Element> gradient_;
  std::uint64_t input_bytes_ = 0;
  double loss_ = std::numeric_limits<double>::quiet_NaN();
  bool prepared_ = false;
  bool has_gradient_ = false;
};

} // namespace kibench::cpu
