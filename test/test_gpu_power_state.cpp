// --power-state on the GPU: the load lasts the time asked of it, and the
// harness, run rested and loaded on the GPU reference, records what each
// state did (waits within their bound; the protocol's load time).
#include <catch2/catch.hpp>

#include <memory>
#include <optional>

#include "kernels/cuda/device_allocator.hpp"
#include "kernels/cuda/power_load.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/machine/backend.hpp"
#include "kernels/lm_head/reference/reference.hpp"
#include "lib/harness/harness.hpp"
#include "lib/harness/power_conditioner.hpp"
#include "lib/harness/raw_samples.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/run/backend.hpp"
#include "test/harness_test_support.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;
using Catch::Matchers::Contains;

TEST_CASE("the power-state load runs for the time asked, by the GPU's clock", "[gpu][power_state]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  gpu::DeviceAllocator allocator("test-power-load");
  gpu::Stream stream;
  gpu::PowerLoad load(allocator, 0);
  load.enqueue(stream, 0.001); // first launch: module load outside the timing
  stream.synchronize();
  gpu::Event start, stop;
  start.record(stream);
  load.enqueue(stream, power_state::kLoadS);
  stop.record(stream);
  stop.synchronize();
  const double ms = gpu::Event::elapsed_ms(start, stop);
  INFO("load of " << power_state::kLoadS << " s took " << ms << " ms");
  CHECK(ms >= power_state::kLoadS * 1e3 * 0.99);
  CHECK(ms < power_state::kLoadS * 1e3 + 5.0); // a block's last check overshoots by a few MMAs
}

TEST_CASE("rested and loaded through the harness on the GPU: the recorded fields", "[gpu][power_state]") {
  KIBENCH_REQUIRE_GPU_OR_SKIP();
  const auto backend = make_backend();
  // The idle band, read before this test puts any work on the GPU.
  auto telemetry = backend->power_telemetry();
  const auto band =
      telemetry ? idle_band(read_idle(*telemetry, WaitClock::steady())) : std::optional<IdleBand>{};
  test::GpuCase c;
  c.name = "power-state";
  c.tokens = 512;
  c.vocab = 8192;
  c.hidden = 512;
  const Workload w = test::make_gpu_workload(c);
  InputSet inputs(w);
  auto impl = backend->make("reference");
  REQUIRE(impl);
  impl->prepare(w, inputs);

  ProtocolSettings s = test::exact_samples(12, 2, 0.0);
  s.cold = true;
  s.timer = "cuda_events";

  SECTION("rested") {
    if (telemetry == nullptr) {
      WARN("no NVML: rested cannot run here");
      impl->release();
      return;
    }
    REQUIRE(band);
    INFO("idle band: " << band->describe());
    CHECK(band->min_clock_mhz > 0.0);
    CHECK(band->max_power_w > power_state::kRestPowerMarginW);
    s.power_state = PowerState::rested;
    RestedConditioner rested(*telemetry, *band);
    const auto results = measure({impl.get()}, s, {}, &rested);
    REQUIRE(results.size() == 1);
    REQUIRE_FALSE(results.front().failure);
    const auto &samples = results.front().samples;
    REQUIRE(samples.size() == 12);
    std::size_t timeouts = 0;
    for (const Sample &sample : samples) {
      REQUIRE(sample.rest);
      CHECK(sample.rest->waited_s >= 0.0);
      // The bound, plus one reading and the sleep's overshoot.
      CHECK(sample.rest->waited_s < power_state::kRestBoundS + 0.05);
      if (sample.rest->hit_bound) {
        ++timeouts;
        CHECK(sample.rest->waited_s >= power_state::kRestBoundS);
      }
      CHECK(sample.ns > 0.0);
    }
    UNSCOPED_INFO(timeouts << " of 12 samples hit the bound");
    const json::Value doc = raw_samples_document(results.front(), "test");
    for (const json::Value &entry : doc.find("samples")->as_array()) {
      CHECK(entry.find("restWaitMs") != nullptr);
      CHECK(entry.find("restTimedOut") != nullptr);
    }
  }
  SECTION("loaded") {
    s.power_state = PowerState::loaded;
    LoadedConditioner loaded;
    const auto results = measure({impl.get()}, s, {}, &loaded);
    REQUIRE(results.size() == 1);
    REQUIRE_FALSE(results.front().failure);
    const auto &samples = results.front().samples;
    REQUIRE(samples.size() == 12);
    // The load is enqueued before the start event: it is not in the samples.
    for (const Sample &sample : samples) {
      CHECK_FALSE(sample.rest);
      CHECK(sample.ns < power_state::kLoadS * 1e9);
    }
    // Its length is in the protocol.
    CHECK_THAT(s.describe(), Contains("Samples start loaded (0.02 s load first)."));
  }
  impl->release();
}
