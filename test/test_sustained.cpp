// The sustained phase (harness/sustained.hpp): power from an energy
// counter that advances in steps, the number of back-to-back invocations,
// and the phase itself on a host implementation with a simulated counter.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "lib/digest/digest.hpp"
#include "lib/harness/harness.hpp"
#include "lib/harness/interleave_order.hpp"
#include "lib/harness/sustained.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/stats/summary.hpp"
#include "lib/worker/protocol.hpp"
#include "test/harness_test_support.hpp"

using namespace kibench;

namespace {

// Reads every `read_s` from `begin_s` to `end_s` of a counter that steps
// every `step_s` by what `watts(t)` delivered since its last step.
template <class Watts>
std::vector<PowerReading> counter_trace(double begin_s, double end_s, double read_s, double step_s,
                                        Watts watts) {
  std::vector<PowerReading> out;
  double energy = 1000.0, last_step = begin_s, integrated = 1000.0;
  for (double t = begin_s; t <= end_s; t += read_s) {
    integrated += watts(t) * read_s;
    if (t - last_step >= step_s) {
      energy = integrated;
      last_step = t;
    }
    out.push_back({t, energy, 1500.0 + (t > 0.5 ? 100.0 : 0.0)});
  }
  return out;
}

// A host "device": one worker thread runs what is enqueued in order, as a
// GPU stream does; run() enqueues a 2 ms task.
class FakeStream {
public:
  FakeStream() : worker_([this] { work(); }) {}
  ~FakeStream() {
    enqueue({});
    worker_.join();
  }
  FakeStream(const FakeStream &) = delete;
  FakeStream &operator=(const FakeStream &) = delete;

  // An empty task ends the worker.
  void enqueue(std::function<void()> task) {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
    ready_.notify_one();
  }
  // The intervals the worker spent in runs, [begin, end] in steady seconds.
  [[nodiscard]] std::vector<std::pair<double, double>> busy() const {
    std::lock_guard lock(mutex_);
    return busy_;
  }
  void record_busy(double begin, double end) {
    std::lock_guard lock(mutex_);
    busy_.emplace_back(begin, end);
  }

private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      if (!task) return;
      task();
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::pair<double, double>> busy_;
  std::thread worker_;
};

// Timestamps taken on the stream, like CUDA events; reusable, as the
// harness reuses a lane's timer for every sample.
class StreamTimer final : public SampleTimer {
public:
  explicit StreamTimer(FakeStream &stream) : stream_(stream) {}
  void start() override {
    {
      std::lock_guard lock(mutex_);
      stop_s_ = 0.0; // elapsed_ns() waits for this sample's stop, not the last one's
    }
    stream_.enqueue([this] {
      std::lock_guard lock(mutex_);
      start_s_ = steady_seconds();
    });
  }
  void stop() override {
    stream_.enqueue([this] {
      std::lock_guard lock(mutex_);
      stop_s_ = steady_seconds();
      done_.notify_all();
    });
  }
  double elapsed_ns() override {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return stop_s_ > 0.0; });
    return (stop_s_ - start_s_) * 1e9;
  }
  [[nodiscard]] std::string name() const override { return "stream"; }

private:
  FakeStream &stream_;
  std::mutex mutex_;
  std::condition_variable done_;
  double start_s_ = 0.0, stop_s_ = 0.0;
};

// The board draws 400 W while a run is in flight and 60 W otherwise; its
// counter steps every 5 ms.
class SimulatedMonitor final : public PowerMonitor {
public:
  explicit SimulatedMonitor(const FakeStream &stream) : stream_(stream) {}
  void start() override { started_ = steady_seconds(); }
  std::vector<PowerReading> stop() override {
    const auto busy = stream_.busy();
    return counter_trace(started_, steady_seconds(), 0.0005, 0.005, [&](double t) {
      for (const auto &[begin, end] : busy)
        if (t >= begin && t <= end) return 400.0;
      return 60.0;
    });
  }
  [[nodiscard]] std::string name() const override { return "simulated"; }

private:
  const FakeStream &stream_;
  double started_ = 0.0;
};

// measure_sustained on the device `impl` opens, as the harness calls it.
std::optional<SustainedMeasurement> sustained_of(Implementation &impl, const ProtocolSettings &s, double median_ns) {
  const auto device = impl.open_device();
  return measure_sustained(impl, *device, s, median_ns);
}

class SleepingImplementation : public test::NullImplementation {
public:
  explicit SleepingImplementation(bool has_monitor) : has_monitor_(has_monitor) {}
  [[nodiscard]] std::string name() const override { return "sleeper"; }
  void run(Pass) override {
    ++runs;
    stream_.enqueue([this] {
      const double begin = steady_seconds();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      stream_.record_busy(begin, steady_seconds());
    });
  }
  std::unique_ptr<Device> open_device() override {
    auto device = std::make_unique<test::TestDevice>([this] { return std::make_unique<StreamTimer>(stream_); });
    if (has_monitor_) device->monitor = [this] { return std::make_unique<SimulatedMonitor>(stream_); };
    return device;
  }

  int runs = 0;

private:
  bool has_monitor_;
  FakeStream stream_;
};

} // namespace

TEST_CASE("power comes from the counter's steps inside the busy interval only", "[harness][sustained]") {
  // Idle at 80 W before 0.2 s and after 1.2 s, 690 W between.
  const auto watts = [](double t) { return t >= 0.2 && t < 1.2 ? 690.0 : 80.0; };
  const auto trace = counter_trace(0.0, 1.5, 0.001, 0.02, watts);
  const auto power = summarize_power(trace, 0.25, 1.15);
  REQUIRE(power);
  CHECK(power->power_w == Approx(690.0).epsilon(0.01));
  CHECK(power->window_s == Approx(0.88).margin(0.03));
  CHECK(power->steps >= 40);
  REQUIRE(power->sm_clock_mhz);
  CHECK(*power->sm_clock_mhz > 1500.0);
  CHECK(*power->sm_clock_mhz < 1600.0);

  // The whole trace mixes in the idle power: the interval matters.
  const auto everything = summarize_power(trace, 0.0, 1.5);
  REQUIRE(everything);
  CHECK(everything->power_w < 600.0);

  SECTION("fewer than two steps inside the interval give no figure") {
    CHECK_FALSE(summarize_power(trace, 0.30, 0.315));
    CHECK_FALSE(summarize_power({}, 0.0, 1.0));
    const std::vector<PowerReading> flat{{0.0, 5.0, {}}, {0.5, 5.0, {}}, {1.0, 5.0, {}}};
    CHECK_FALSE(summarize_power(flat, 0.0, 1.0));
  }
  SECTION("a counter that runs backwards is refused") {
    const std::vector<PowerReading> odd{{0.0, 9.0, {}}, {0.1, 10.0, {}}, {0.2, 4.0, {}}, {0.3, 5.0, {}}};
    CHECK_FALSE(summarize_power(odd, 0.05, 0.35));
  }
}

TEST_CASE("the sustained phase runs about sustained_time_s of invocations, at least 3",
          "[harness][sustained]") {
  ProtocolSettings s;
  s.sustained_time_s = 1.0;
  CHECK(sustained_invocations(s, 35e6) == 29);
  CHECK(sustained_invocations(s, 2e9) == 3);
  CHECK(sustained_invocations(s, 1e3) == 10000);
  CHECK(sustained_invocations(s, 0.0) == 10000);
  s.sustained_time_s = 0.5;
  CHECK(sustained_invocations(s, 1e6) == 500);
}

TEST_CASE("measure_sustained times back-to-back runs and prices them in joules", "[harness][sustained]") {
  ProtocolSettings s;
  s.sustained_time_s = 0.06;
  SleepingImplementation impl(true);
  const auto m = sustained_of(impl, s, 2e6);
  REQUIRE(m);
  CHECK(m->monitor == "simulated");
  CHECK(m->invocations == 30);
  CHECK(m->warmup_invocations == 8);
  CHECK(impl.runs == 38);
  CHECK(m->latency_ns >= 2e6);
  CHECK(m->latency_ns < 20e6);
  REQUIRE(m->power);
  CHECK(m->power->power_w == Approx(400.0).epsilon(0.05));
  REQUIRE(m->energy_j);
  CHECK(*m->energy_j == Approx(400.0 * m->latency_ns * 1e-9).epsilon(0.05));
  REQUIRE(m->rounds.size() == 1);
  CHECK(m->rounds[0].latency_ns == m->latency_ns);

  SECTION("no phase without a monitor, when it is off, or for the backward pass") {
    SleepingImplementation plain(false);
    CHECK_FALSE(sustained_of(plain, s, 2e6));
    CHECK(plain.runs == 0);
    ProtocolSettings off = s;
    off.sustained_time_s = 0.0;
    CHECK_FALSE(sustained_of(impl, off, 2e6));
    ProtocolSettings backward = s;
    backward.pass = Pass::backward;
    CHECK_FALSE(sustained_of(impl, backward, 2e6));
  }
}

namespace {

// A lane whose sustained phase runs elsewhere (a worker process): kibench
// asks once and takes the figures that come back through the worker's
// messages; its own run() is never called for the phase.
class ElsewhereImplementation final : public SleepingImplementation, public RemoteSustained {
public:
  ElsewhereImplementation() : SleepingImplementation(false) {}
  std::optional<SustainedMeasurement> measure_sustained_there(const ProtocolSettings &settings,
                                                              double median_ns) override {
    asked = median_ns;
    SleepingImplementation there(true);
    const auto m = sustained_of(there, settings, median_ns);
    return worker::sustained_from_json(json::Value(worker::sustained_to_json(m)));
  }
  double asked = 0.0;
};

} // namespace

TEST_CASE("a lane in a worker process measures its sustained phase there", "[harness][sustained][worker]") {
  ProtocolSettings s;
  s.sustained_time_s = 0.06;
  ElsewhereImplementation impl;
  const auto m = sustained_of(impl, s, 2e6);
  CHECK(impl.asked == 2e6);
  CHECK(impl.runs == 0);
  REQUIRE(m);
  CHECK(m->monitor == "simulated");
  CHECK(m->invocations == 30);
  CHECK(m->warmup_invocations == 8);
  CHECK(m->latency_ns >= 2e6);
  REQUIRE(m->power);
  CHECK(m->power->power_w == Approx(400.0).epsilon(0.05));
  CHECK(m->power->steps >= 2);
  CHECK(m->power->sm_clock_mhz.has_value());
  // A worker without a power monitor says so, and there is no phase.
  CHECK_FALSE(worker::sustained_from_json(json::Value(worker::sustained_to_json(std::nullopt))));
  CHECK_THROWS_WITH(worker::sustained_from_json(json::Value(json::Object{{"measured", "yes"}})),
                    Catch::Contains("\"measured\" is not a boolean"));
  // Off, or the backward pass: not asked at all.
  ProtocolSettings off = s;
  off.sustained_time_s = 0.0;
  impl.asked = 0.0;
  CHECK_FALSE(sustained_of(impl, off, 2e6));
  CHECK(impl.asked == 0.0);
}

TEST_CASE("measure() runs the sustained phase after the samples", "[harness][sustained]") {
  ProtocolSettings s = test::exact_samples(5, 1, 0.02);
  SleepingImplementation with(true), without(false);
  const auto results = measure({&with, &without}, s);
  REQUIRE(results.size() == 2);
  REQUIRE(results[0].sustained);
  CHECK(results[0].sustained->rounds.size() == kDefaultSustainedRounds);
  CHECK(results[0].sustained->invocations >= 3 * kDefaultSustainedRounds);
  CHECK_FALSE(results[1].sustained);
  CHECK(without.runs == 6);

  SECTION("one round where asked") {
    s.sustained_rounds = 1;
    SleepingImplementation once(true);
    const auto single = measure({&once}, s);
    REQUIRE(single[0].sustained);
    CHECK(single[0].sustained->rounds.size() == 1);
  }
}

namespace {

// A sleeper that writes its name into a shared log at every invocation, so
// a test sees the order in which lanes ran back to back; with
// `monitors_before_failing` >= 0 its device loses its power monitor (throws)
// after that many, i.e. in that turn of the sustained phase, before the
// turn enqueues anything.
class LoggingSleeper final : public SleepingImplementation {
public:
  LoggingSleeper(std::string name, std::vector<std::string> &log, int monitors_before_failing = -1)
      : SleepingImplementation(true), name_(std::move(name)), log_(log), monitors_left_(monitors_before_failing) {}
  [[nodiscard]] std::string name() const override { return name_; }
  void run(Pass pass) override {
    if (log_.empty() || log_.back() != name_) log_.push_back(name_);
    SleepingImplementation::run(pass);
  }
  std::unique_ptr<Device> open_device() override {
    std::unique_ptr<Device> device = SleepingImplementation::open_device();
    auto &test_device = dynamic_cast<test::TestDevice &>(*device);
    test_device.monitor = [this, make = test_device.monitor]() -> std::unique_ptr<PowerMonitor> {
      if (monitors_left_ == 0) throw std::runtime_error("lost the device");
      if (monitors_left_ > 0) --monitors_left_;
      return make();
    };
    return device;
  }

private:
  std::string name_;
  std::vector<std::string> &log_;
  int monitors_left_;
};

} // namespace

TEST_CASE("the sustained phase takes turns in the samples' rotated order and reports medians over them",
          "[harness][sustained]") {
  ProtocolSettings s = test::exact_samples(2, 0, 0.01);
  s.sustained_rounds = 4;
  std::vector<std::string> log;
  LoggingSleeper a("a", log), b("b", log), c("c", log);
  const auto results = measure({&a, &b, &c}, s);
  REQUIRE(results.size() == 3);
  // The last 12 turns are the phase: round r in interleave_order(3, r).
  REQUIRE(log.size() >= 12);
  std::vector<std::string> expected;
  for (std::size_t round = 0; round < 4; ++round)
    for (const std::size_t k : interleave_order(3, round)) expected.push_back(std::string(1, static_cast<char>('a' + k)));
  // A lane's turn may directly follow its own last sample or turn: compare
  // the phase's turns with adjacent repeats merged, as the log merges them.
  std::vector<std::string> merged;
  for (const std::string &name : expected)
    if (merged.empty() || merged.back() != name) merged.push_back(name);
  REQUIRE(log.size() >= merged.size());
  CHECK(std::vector<std::string>(log.end() - static_cast<std::ptrdiff_t>(merged.size()), log.end()) == merged);
  // Not always the same lane last: the turn after the others' work moves.
  std::set<std::string> last_in_round;
  for (std::size_t round = 0; round < 4; ++round) last_in_round.insert(expected[3 * round + 2]);
  CHECK(last_in_round.size() > 1);
  for (const Measurement &m : results) {
    REQUIRE(m.sustained);
    CHECK(m.sustained->rounds.size() == 4);
    std::vector<double> latencies;
    for (const SustainedRound &r : m.sustained->rounds) latencies.push_back(r.latency_ns);
    CHECK(m.sustained->latency_ns == stats::median(latencies));
  }

  SECTION("a lane that fails a turn fails, and the others keep their rounds") {
    std::vector<std::string> log2;
    LoggingSleeper steady("steady", log2), flaky("flaky", log2, 2);
    const auto mixed = measure({&steady, &flaky}, s);
    REQUIRE(mixed.size() == 2);
    REQUIRE(mixed[0].sustained);
    CHECK(mixed[0].sustained->rounds.size() == 4);
    REQUIRE(mixed[1].failure);
    CHECK(mixed[1].failure->reason.find("lost the device") != std::string::npos);
    CHECK_FALSE(mixed[1].sustained);
  }
}

TEST_CASE("rounds combine into medians; a round without power counts for time only", "[harness][sustained]") {
  const auto round = [](double ms, std::optional<double> watts) {
    SustainedRound r;
    r.warmup_invocations = 2;
    r.invocations = 10;
    r.latency_ns = ms * 1e6;
    if (watts) r.power = PowerSummary{*watts, 0.2, 3, 1500.0};
    return r;
  };
  const SustainedMeasurement m =
      combine_sustained_rounds({round(30.0, 700.0), round(34.0, 690.0), round(31.0, std::nullopt)}, "nvml");
  CHECK(m.monitor == "nvml");
  CHECK(m.invocations == 30);
  CHECK(m.warmup_invocations == 6);
  CHECK(m.latency_ns == Approx(31e6));
  REQUIRE(m.power);
  CHECK(m.power->power_w == Approx(695.0));
  CHECK(m.power->steps == 6);
  CHECK(m.power->window_s == Approx(0.4));
  REQUIRE(m.energy_j);
  // The median of 21.0 J and 23.46 J, not the median power times the median latency.
  CHECK(*m.energy_j == Approx((0.700 * 30.0 + 0.690 * 34.0) / 2.0));
  CHECK_FALSE(combine_sustained_rounds({round(30.0, std::nullopt)}, "nvml").energy_j);
  CHECK_THROWS_AS(combine_sustained_rounds({}, "nvml"), std::invalid_argument);

  // Through a worker's messages and back, rounds and all.
  const auto back = worker::sustained_from_json(json::Value(worker::sustained_to_json(m)));
  REQUIRE(back);
  CHECK(back->rounds.size() == 3);
  CHECK(back->latency_ns == m.latency_ns);
  CHECK(*back->energy_j == Approx(*m.energy_j));
  CHECK_FALSE(back->rounds[2].power);
  CHECK_THROWS_WITH(worker::sustained_from_json(json::Value(json::Object{{"measured", true}, {"monitor", "x"},
                                                                         {"rounds", json::Array{}}})),
                    Catch::Contains("\"rounds\" is not a non-empty array"));
}

TEST_CASE("the protocol describes the sustained phase outside its identity", "[harness][sustained]") {
  ProtocolSettings on;
  on.timer = "cuda_events";
  ProtocolSettings off = on;
  off.sustained_time_s = 0.0;
  const json::Value with = protocol_manifest(on, "oracle-fp64", {});
  const json::Value without = protocol_manifest(off, "oracle-fp64", {});
  const std::string description = on.describe_sustained();
  CHECK(description.find("back to back, warm") != std::string::npos);
  CHECK(description.find("~1 s") != std::string::npos);
  CHECK(description.find("3 rounds in the samples' rotated order") != std::string::npos);
  ProtocolSettings one_round = on;
  one_round.sustained_rounds = 1;
  CHECK(one_round.describe_sustained().find("rounds") == std::string::npos);
  CHECK(manifest_digest(protocol_manifest(one_round, "oracle-fp64", {})) == manifest_digest(with));
  // KernelIndex caps metadata descriptions at 2000 characters.
  CHECK(description.size() <= 2000);
  CHECK(off.describe_sustained().empty());
  const json::Value *text = with.find("metadata")->find("description");
  REQUIRE(text != nullptr);
  CHECK(text->as_string() == description);
  CHECK(without.find("metadata")->find("description") == nullptr);
  // The samples are the same either way, so is the protocol's identity.
  CHECK(manifest_digest(with) == manifest_digest(without));
  CHECK(on.describe() == off.describe());
}
