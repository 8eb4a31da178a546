// --lock-clocks on a GPU through NVML: the state reads, and a lock either
// holds (root) and is reset afterwards, or is refused with NVML's reason;
// never an exception. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <string>

#include "kernels/cuda/nvml.hpp"
#include "kernels/cuda/nvml_clock_control.hpp"
#include "lib/environment/clock_control.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

TEST_CASE("NVML's clock state reads, and --lock-clocks locks and resets or fails soft", "[gpu][clocks]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const gpu::Nvml *nvml = gpu::Nvml::instance();
  if (nvml == nullptr) {
    WARN("NVML not available: " << gpu::Nvml::load_failure());
    return;
  }
  gpu::NvmlClockControl control(*nvml, 0);
  const ClockState before = clock_state(control.read());
  INFO("before: " << before.description);
  CHECK_FALSE(before.description.empty());
  if (before.locked) return; // held by someone else: left alone, as the guard does

  std::string note;
  {
    ClockLockGuard guard(control, ClockTarget::max, [&](const std::string &line) { note = line; });
    INFO("note: " << note);
    if (guard.locked()) {
      CHECK(clock_state(control.read()).locked);
      CHECK(guard.locked_mhz().has_value());
    } else {
      CHECK_THAT(note, Catch::Matchers::Contains("NVML refused"));
    }
  }
  // Reset (or never set): the state is as it was.
  CHECK(clock_state(control.read()).locked == before.locked);
}
