// For the harness tests: an Implementation that holds and checks nothing
// (a test derives from it and gives run(), name() and the timer, and a
// power monitor where it needs one), and settings that take an exact
// number of warm samples.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "lib/harness/protocol_settings.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/json/value.hpp"

namespace kibench::test {

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
