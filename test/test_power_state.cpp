// --power-state: the setting in the protocol (its sentence, its digest,
// compare's reading of it and its cohorts), the rested wait on a fake
// board and a fake clock, the conditioners, the harness calling the
// conditioner once before every timed sample and outside the timed region,
// the raw samples' fields, and the flag on the command line.
#include <catch2/catch.hpp>

#include <deque>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lib/compare/compare.hpp"
#include "lib/compare/protocol_differences.hpp"
#include "lib/compare/protocol_terms.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/digest/digest.hpp"
#include "lib/harness/harness.hpp"
#include "lib/harness/power_conditioner.hpp"
#include "lib/environment/power_telemetry_set.hpp"
#include "lib/harness/power_state.hpp"
#include "lib/harness/raw_samples.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/implementation_result.hpp"
#include "lib/run/outcome.hpp"
#include "test/cli_fixtures.hpp"
#include "test/harness_test_support.hpp"
#include "test/test_compare_support.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using namespace kibench;

namespace {

ProtocolSettings cpu_settings(PowerState state) {
  ProtocolSettings settings;
  settings.timer = "steady_clock";
  settings.cold = false;
  settings.power_state = state;
  return settings;
}

const std::vector<PowerState> kStates = {PowerState::as_is, PowerState::rested, PowerState::loaded};

// A board whose readings are given in advance, one per read(); the last
// one repeats.
class ScriptedBoard final : public PowerTelemetry {
public:
  explicit ScriptedBoard(std::deque<BoardReading> readings) : readings_(std::move(readings)) {}
  BoardReading read() override {
    ++reads;
    const BoardReading r = readings_.front();
    if (readings_.size() > 1) readings_.pop_front();
    return r;
  }
  int reads = 0;

private:
  std::deque<BoardReading> readings_;
};

// A clock that moves only when slept on.
struct FakeClock {
  double now = 100.0;
  std::vector<double> sleeps;
  WaitClock clock() {
    return {[this] { return now; },
            [this](double s) {
              sleeps.push_back(s);
              now += s;
            }};
  }
};

BoardReading reading(double mhz, double w) {
  return {mhz, w};
}

} // namespace

TEST_CASE("power states by name; as-is is the default", "[power_state]") {
  CHECK(kDefaultPowerState == PowerState::as_is);
  CHECK(ProtocolSettings{}.power_state == PowerState::as_is);
  for (const PowerState state : kStates) CHECK(power_state_from_string(to_string(state)) == state);
  CHECK(to_string(PowerState::as_is) == "as-is");
  CHECK_FALSE(power_state_from_string("as_is"));
  CHECK_FALSE(power_state_from_string("Rested"));
  CHECK_FALSE(power_state_from_string(""));
}

TEST_CASE("the power state is part of the protocol: stated in its notes, read back, in its digest",
          "[power_state][manifest]") {
  std::set<std::string> digests;
  for (const PowerState state : kStates) {
    INFO(to_string(state));
    const ProtocolSettings settings = cpu_settings(state);
    const json::Value protocol = protocol_manifest(settings, "cpu-fp64", {});
    digests.insert(manifest_digest(protocol));
    // What the manifest says reads back as the setting that wrote it.
    const auto reading = compare::read_notes_settings(compare::comparability_notes(protocol));
    REQUIRE_FALSE(reading.settings.empty());
    CHECK(reading.settings.back().name == "powerState");
    CHECK(reading.settings.back().value == to_string(state));
    // The sentence is removed whole: nothing of it is left to differ.
    CHECK(reading.rest.find("Samples start") == std::string::npos);
    // The same settings give the same manifest, byte for byte.
    CHECK(manifest_digest(protocol_manifest(settings, "cpu-fp64", {})) == manifest_digest(protocol));
  }
  CHECK(digests.size() == kStates.size());

  // as-is writes no sentence, so its protocols are those of runs made
  // before the setting existed.
  CHECK(cpu_settings(PowerState::as_is).describe().find("starts") == std::string::npos);
  CHECK_THAT(cpu_settings(PowerState::rested).describe(),
             EndsWith(" Samples start rested (wait <= 0.25 s)."));
  CHECK_THAT(cpu_settings(PowerState::loaded).describe(),
             EndsWith(" Samples start loaded (0.02 s load first)."));
  // How the state is brought about, in full, in the protocol's description.
  for (const PowerState state : kStates) {
    const json::Value protocol = protocol_manifest(cpu_settings(state), "cpu-fp64", {});
    const json::Value *description = json::member_at(protocol, "metadata.description");
    if (state == PowerState::as_is) {
      CHECK_THAT(description ? description->as_string() : "", !Contains("Rested") && !Contains("Loaded"));
    } else {
      REQUIRE(description);
      CHECK_THAT(description->as_string(),
                 StartsWith(cpu_settings(state).describe_power_state_method()) &&
                     Contains(state == PowerState::rested ? "at least 0.97 of" : "0.02 s"));
    }
  }

  SECTION("a GPU protocol's notes and description stay within KernelIndex's limits in every state and pass") {
    for (const PowerState state : kStates)
      for (const Pass pass : {Pass::forward, Pass::backward, Pass::full})
        for (const bool share : {false, true}) {
          ProtocolSettings gpu;
          gpu.timer = "cuda_events";
          gpu.pass = pass;
          gpu.power_state = state;
          gpu.share_rounds = share;
          INFO(to_string(state) << ", " << to_string(pass) << ", share rounds " << share);
          const json::Value protocol = protocol_manifest(gpu, "oracle-fp64", {});
          CHECK(compare::comparability_notes(protocol).size() <= 1000);
          // The description (with the sustained phase's) within its 2000.
          CHECK(json::member_at(protocol, "metadata.description")->as_string().size() <= 2000);
        }
  }

  SECTION("another wording of the sentence: the state is still read, the rest differs by its words") {
    std::string notes = cpu_settings(PowerState::loaded).describe();
    const std::size_t at = notes.find("0.02 s");
    REQUIRE(at != std::string::npos);
    notes.replace(at, 6, "0.05 s");
    const auto reading = compare::read_notes_settings(notes);
    CHECK(reading.settings.back().value == "loaded");
    CHECK(reading.rest.find("Samples start {} (0.05 s load first).") != std::string::npos);
  }
}

TEST_CASE("compare: runs with different power states are not one cohort, and the field is named",
          "[power_state][compare]") {
  for (const PowerState other : {PowerState::rested, PowerState::loaded}) {
    INFO(to_string(other));
    const auto differences =
        compare::protocol_differences(protocol_manifest(cpu_settings(PowerState::as_is), "cpu-fp64", {}),
                                      protocol_manifest(cpu_settings(other), "cpu-fp64", {}));
    REQUIRE(differences.size() == 1);
    CHECK(differences.front().field == "powerState");
    CHECK(differences.front().first == "as-is");
    CHECK(differences.front().second == to_string(other));
  }

  test::TempDir tmp;
  const test::FixtureCase as_is = test::FixtureCase::standard();
  test::FixtureCase rested = as_is;
  rested.protocol = protocol_manifest(cpu_settings(PowerState::rested), "cpu-fp64", {});
  test::write_run_directory(tmp.path() / "a", rested,
                            {test::FixtureRun("cpu-reference", test::quiet_samples(1000, 1))});
  test::write_run_directory(tmp.path() / "b", as_is,
                            {test::FixtureRun("cpu-reference", test::quiet_samples(1000, 2))});
  compare::CompareOptions options;
  options.bootstrap.resamples = 200;
  const auto report =
      compare::compare_runs(compare::load_runs({tmp.path() / "a", tmp.path() / "b"}), options);
  REQUIRE(report.not_comparable.size() == 1);
  const auto &reason = report.not_comparable.front().reasons.front();
  CHECK(reason.code == compare::ReasonCode::protocol_incomparable);
  CHECK_THAT(reason.detail, Contains("powerState rested ≠ as-is"));
  for (const auto &cohort : report.cohorts) CHECK(cohort.members.size() < 2);
}

TEST_CASE("the idle band: medians of the idle readings, the clock fraction and the power margin",
          "[power_state]") {
  const auto band = idle_band({reading(1980, 80), reading(1965, 95), reading(1980, 78)});
  REQUIRE(band);
  CHECK(band->min_clock_mhz == Approx(power_state::kRestClockFraction * 1980));
  CHECK(band->max_power_w == Approx(80 + power_state::kRestPowerMarginW));
  CHECK(band->holds(reading(1980, 80)));
  CHECK(band->holds(reading(band->min_clock_mhz, band->max_power_w)));
  CHECK_FALSE(band->holds(reading(1800, 80)));
  CHECK_FALSE(band->holds(reading(1980, 300)));
  CHECK_FALSE(band->holds(BoardReading{1980.0, std::nullopt}));
  CHECK_FALSE(band->holds(BoardReading{std::nullopt, 80.0}));
  CHECK(band->describe() == "SM clock >= 1921 MHz and board power <= 110 W");
  // Without both readings there is no band to return to.
  CHECK_FALSE(idle_band({}));
  CHECK_FALSE(idle_band({reading(1980, 80), BoardReading{1980.0, std::nullopt}}));

  ScriptedBoard board({reading(1980, 80)});
  FakeClock clock;
  const auto idle = read_idle(board, clock.clock());
  CHECK(idle.size() == static_cast<std::size_t>(power_state::kIdleReadings));
  CHECK(clock.sleeps.size() == idle.size() - 1);
}

TEST_CASE("rested: the wait ends in the band, or at its bound", "[power_state]") {
  const IdleBand band{1900, 110};
  const double bound = 0.25, poll = 0.002;

  SECTION("already in the band: no wait") {
    ScriptedBoard board({reading(1980, 90)});
    FakeClock clock;
    const RestOutcome r = rest_until_in_band(board, band, bound, poll, clock.clock());
    CHECK(r.waited_s == 0.0);
    CHECK_FALSE(r.hit_bound);
    CHECK(board.reads == 1);
  }
  SECTION("the band is reached after the clock recovers and the power falls") {
    ScriptedBoard board({reading(1500, 650), reading(1700, 400), reading(1950, 200), reading(1960, 105)});
    FakeClock clock;
    const RestOutcome r = rest_until_in_band(board, band, bound, poll, clock.clock());
    CHECK(board.reads == 4);
    CHECK(r.waited_s == Approx(3 * poll));
    CHECK_FALSE(r.hit_bound);
    for (const double s : clock.sleeps) CHECK(s == Approx(poll));
  }
  SECTION("a board that never returns: the bound, then one last reading, and the sample goes on") {
    ScriptedBoard board({reading(1500, 650)});
    FakeClock clock;
    const RestOutcome r = rest_until_in_band(board, band, bound, poll, clock.clock());
    CHECK(r.hit_bound);
    CHECK(r.waited_s == Approx(bound));
    double slept = 0;
    for (const double s : clock.sleeps) slept += s;
    CHECK(slept == Approx(bound)); // never sleeps past the bound
    CHECK(board.reads == static_cast<int>(clock.sleeps.size()) + 1);
  }
  SECTION("readings that stop coming count as out of the band") {
    ScriptedBoard board({BoardReading{}});
    FakeClock clock;
    CHECK(rest_until_in_band(board, band, bound, poll, clock.clock()).hit_bound);
  }
  SECTION("reached exactly at the bound: in the band, not a timeout") {
    std::deque<BoardReading> script(125, reading(1500, 650)); // 125 readings, 124 polls: 0.248 s
    script.push_back(reading(1950, 100));                     // at 0.25 s
    ScriptedBoard board(script);
    FakeClock clock;
    const RestOutcome r = rest_until_in_band(board, band, bound, poll, clock.clock());
    CHECK_FALSE(r.hit_bound);
    CHECK(r.waited_s == Approx(bound));
  }
}

namespace {

// Records every call the harness makes, in order, into a shared log.
class TimerLog final : public SampleTimer {
public:
  explicit TimerLog(std::vector<std::string> &log) : log_(log) {}
  void start() override { log_.push_back("start"); }
  void stop() override { log_.push_back("stop"); }
  double elapsed_ns() override { return 1000.0; }
  [[nodiscard]] std::string name() const override { return "log"; }

private:
  std::vector<std::string> &log_;
};

// Its device's flush, idle wait, load and timer go into the log too.
std::unique_ptr<test::TestDevice> logged_device(std::vector<std::string> &log, std::vector<double> &loads) {
  auto device = std::make_unique<test::TestDevice>([&log] { return std::make_unique<TimerLog>(log); });
  device->flush = [&log] { log.push_back("flush"); };
  device->idle = [&log] { log.push_back("wait_idle"); };
  device->load = [&log, &loads](double seconds) {
    log.push_back("load");
    loads.push_back(seconds);
  };
  return device;
}

class LoggedImplementation final : public test::NullImplementation {
public:
  LoggedImplementation(std::vector<std::string> &log, bool gpu) : log_(log), gpu_(gpu) {}
  [[nodiscard]] std::string name() const override { return gpu_ ? "gpu-like" : "host"; }
  [[nodiscard]] bool needs_gpu() const override { return gpu_; }
  void before_sample(Pass) override { log_.push_back("before"); }
  void run(Pass) override { log_.push_back("run"); }
  std::unique_ptr<Device> open_device() override { return logged_device(log_, loads); }
  std::vector<double> loads;

private:
  std::vector<std::string> &log_;
  bool gpu_;
};

class LoggedConditioner final : public PowerConditioner {
public:
  explicit LoggedConditioner(std::vector<std::string> &log) : log_(log) {}
  std::optional<RestOutcome> condition(const Implementation &, Device &) override {
    log_.push_back("condition");
    ++calls_;
    return RestOutcome{0.001 * calls_, calls_ % 2 == 0};
  }

private:
  std::vector<std::string> &log_;
  int calls_ = 0;
};

} // namespace

TEST_CASE("the harness conditions once before every timed sample, after the flush, outside the timer",
          "[power_state][harness]") {
  ProtocolSettings s = test::exact_samples(5, 2, 0.0);
  s.cold = true;
  s.power_state = PowerState::rested;
  std::vector<std::string> log;
  LoggedImplementation impl(log, true);
  LoggedConditioner conditioner(log);
  const auto results = measure({&impl}, s, {}, &conditioner);
  REQUIRE(results.size() == 1);
  const std::vector<std::string> warmup = {"flush", "before", "start", "run", "stop"};
  const std::vector<std::string> timed = {"flush", "before", "condition", "start", "run", "stop"};
  std::vector<std::string> expected;
  for (int i = 0; i < 2; ++i) expected.insert(expected.end(), warmup.begin(), warmup.end());
  for (int i = 0; i < 5; ++i) expected.insert(expected.end(), timed.begin(), timed.end());
  CHECK(log == expected);
  // Each sample carries what its conditioning returned.
  const auto &samples = results.front().samples;
  REQUIRE(samples.size() == 5);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    REQUIRE(samples[k].rest);
    CHECK(samples[k].rest->waited_s == Approx(0.001 * static_cast<double>(k + 1)));
    CHECK(samples[k].rest->hit_bound == ((k + 1) % 2 == 0));
  }

  SECTION("a state other than as-is without a conditioner is a programming error") {
    CHECK_THROWS_AS(measure({&impl}, s), std::logic_error);
  }
  SECTION("as-is: no conditioning, no rest fields") {
    s.power_state = PowerState::as_is;
    log.clear();
    const auto plain = measure({&impl}, s);
    CHECK(std::count(log.begin(), log.end(), "condition") == 0);
    for (const Sample &sample : plain.front().samples) CHECK_FALSE(sample.rest);
  }
}

TEST_CASE("the conditioners: rested waits for the device, then the band; loaded enqueues the load",
          "[power_state][harness]") {
  std::vector<std::string> log;
  LoggedImplementation gpu(log, true), host(log, false);
  const auto gpu_device = gpu.open_device(), host_device = host.open_device();

  SECTION("rested") {
    ScriptedBoard board({reading(1500, 600), reading(1980, 80)});
    FakeClock clock;
    RestedConditioner rested(board, IdleBand{1900, 110}, clock.clock());
    const auto outcome = rested.condition(gpu, *gpu_device);
    CHECK(log == std::vector<std::string>{"wait_idle"});
    REQUIRE(outcome);
    CHECK(outcome->waited_s == Approx(power_state::kPollIntervalS));
    CHECK_FALSE(outcome->hit_bound);
    // A host implementation is not conditioned, and says so by no outcome.
    CHECK_FALSE(rested.condition(host, *host_device));
    CHECK(board.reads == 2);
  }
  SECTION("loaded") {
    LoadedConditioner loaded;
    CHECK_FALSE(loaded.condition(gpu, *gpu_device));
    CHECK_FALSE(loaded.condition(host, *host_device));
    CHECK(log == std::vector<std::string>{"load"});
    CHECK(gpu.loads == std::vector<double>{power_state::kLoadS});
  }
  SECTION("through the harness, loaded's load comes between the flush and the timer's start") {
    ProtocolSettings s = test::exact_samples(3, 0, 0.0);
    s.cold = true;
    s.power_state = PowerState::loaded;
    LoadedConditioner loaded;
    measure({&gpu}, s, {}, &loaded);
    const std::vector<std::string> timed = {"flush", "before", "load", "start", "run", "stop"};
    std::vector<std::string> expected;
    for (int i = 0; i < 3; ++i) expected.insert(expected.end(), timed.begin(), timed.end());
    CHECK(log == expected);
  }
}

TEST_CASE("raw samples carry each rested sample's wait and whether it hit the bound", "[power_state]") {
  Measurement m;
  m.implementation = "fused";
  m.timer = "cuda_events";
  Sample waited;
  waited.ns = 1000;
  waited.rest = RestOutcome{0.0125, false};
  Sample timed_out;
  timed_out.ns = 1100;
  timed_out.round = 1;
  timed_out.rest = RestOutcome{0.25, true};
  Sample plain;
  plain.ns = 1200;
  plain.round = 2;
  m.samples = {waited, timed_out, plain};
  const json::Value doc = raw_samples_document(m, "inv");
  const auto &entries = doc.find("samples")->as_array();
  CHECK(entries[0].find("restWaitMs")->as_number() == Approx(12.5));
  CHECK_FALSE(entries[0].find("restTimedOut")->as_bool());
  CHECK(entries[1].find("restTimedOut")->as_bool());
  CHECK(entries[2].find("restWaitMs") == nullptr);
  CHECK(entries[2].find("restTimedOut") == nullptr);

  const Measurement back = read_raw_samples(doc, "samples.fused.json", nullptr);
  REQUIRE(back.samples.size() == 3);
  REQUIRE(back.samples[0].rest);
  CHECK(back.samples[0].rest->waited_s == Approx(0.0125));
  CHECK_FALSE(back.samples[0].rest->hit_bound);
  REQUIRE(back.samples[1].rest);
  CHECK(back.samples[1].rest->hit_bound);
  CHECK_FALSE(back.samples[2].rest);
}

TEST_CASE("a rested run's labels count the samples that started at the bound", "[power_state][run]") {
  Workload w;
  w.name = "rested";
  w.tokens = w.vocab = 100;
  w.hidden = 64;
  w.student_hidden = 32;
  RunDirectoryContext context;
  context.workload = &w;
  context.workload_digest = context.protocol_digest = context.environment_digest = sha256_digest("x");
  context.observed_at = "2026-01-02T03:04:05.678Z";
  ImplementationFacts facts;
  facts.name = "fused";
  facts.measurement.implementation = "fused";
  facts.measurement.timer = "cuda_events";
  facts.measurement.stop_reason = "max_samples";
  for (std::size_t k = 0; k < 5; ++k) {
    Sample sample;
    sample.ns = 1e6 + static_cast<double>(k);
    sample.round = k;
    sample.rest = RestOutcome{k < 2 ? 0.25 : 0.01, k < 2};
    facts.measurement.samples.push_back(sample);
  }
  const auto labels_written = [&](const ImplementationFacts &f) {
    test::TempDir tmp;
    io::StagedDirectory dir(tmp.path() / "run");
    record_implementation(dir, context, "{}\n", sha256_digest("{}"), f);
    dir.commit();
    return *json::member_at(json::parse_file(tmp.path() / "run" / "run.fused.json"), "metadata.labels");
  };
  const json::Value labels = labels_written(facts);
  REQUIRE(labels.find("rest_timeouts") != nullptr);
  CHECK(labels.find("rest_timeouts")->as_string() ==
        "2 of 5 samples started at the 0.25 s bound, not in the idle band");
  // Samples that did not rest (as-is, loaded): no such label.
  for (Sample &sample : facts.measurement.samples) sample.rest.reset();
  CHECK(labels_written(facts).find("rest_timeouts") == nullptr);
}

TEST_CASE("run --power-state: a bad value, or a state without a GPU to bring it about, is refused",
          "[power_state][cli]") {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto run = [&](const std::string &flag) {
    return test::run_kibench("run " + test::quoted(test::kSmallWorkload) + " --impl cpu-reference --out " +
                             test::quoted(out) + " " + test::kQuickSampling + " " + flag);
  };
  for (const std::string bad : {"warm", "as_is", "Loaded"}) {
    INFO(bad);
    const auto refused = run("--power-state " + bad);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("--power-state: ") && Contains("is not as-is, rested or loaded"));
    CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  }
  // cpu-reference alone: nothing on a GPU to rest or to load, on any machine.
  for (const std::string state : {"rested", "loaded"}) {
    INFO(state);
    const auto refused = run("--power-state " + state);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("--power-state " + state + ": needs a GPU: "));
    CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  }
  CHECK_FALSE(fs::exists(out));

  const auto as_is = run("--power-state as-is");
  CHECK(as_is.exit_code == 0);
}

TEST_CASE("the default protocol is the GPU CI baseline's, so its gate compares like with like", "[power_state]") {
  // ci/baselines/h200 is a plain `kibench run` (shared rounds, as-is power
  // state); the GPU workflow times with the defaults against it.
  std::filesystem::path baseline_protocol;
  for (const auto &entry : std::filesystem::directory_iterator(test::kSourceDir / "ci/baselines/h200"))
    if (std::filesystem::exists(entry.path() / "protocol.json"))
      baseline_protocol = entry.path() / "protocol.json";
  REQUIRE_FALSE(baseline_protocol.empty());
  const json::Value baseline = json::parse_file(baseline_protocol);

  ProtocolSettings defaults;
  defaults.timer = "cuda_events";
  defaults.share_rounds = kShareRoundsByDefault; // --own-rounds turns it off
  REQUIRE(defaults.power_state == kDefaultPowerState);
  const json::Value written = protocol_manifest(defaults, "oracle-fp64", {});
  CHECK(compare::comparability_notes(written) == compare::comparability_notes(baseline));
  CHECK(json::member_at(written, "spec.comparability.family")->as_string() ==
        json::member_at(baseline, "spec.comparability.family")->as_string());

  ProtocolSettings own_rounds = defaults;
  own_rounds.share_rounds = false;
  CHECK(compare::comparability_notes(protocol_manifest(own_rounds, "oracle-fp64", {})) !=
        compare::comparability_notes(baseline));
}

TEST_CASE("a multi-GPU run's boards read as one: the lowest clock, the highest power", "[power_state][multi_gpu]") {
  std::vector<std::unique_ptr<PowerTelemetry>> boards;
  boards.push_back(std::make_unique<ScriptedBoard>(std::deque<BoardReading>{{1980.0, 80.0}, {1980.0, 75.0}}));
  boards.push_back(std::make_unique<ScriptedBoard>(std::deque<BoardReading>{{1755.0, 120.0}, {1980.0, 78.0}}));
  boards.push_back(std::make_unique<ScriptedBoard>(std::deque<BoardReading>{{1980.0, 90.0}, {1980.0, std::nullopt}}));
  PowerTelemetrySet set(std::move(boards));
  const BoardReading hot = set.read();
  CHECK(hot.sm_clock_mhz == 1755.0);
  CHECK(hot.power_w == 120.0);
  // A board without a power reading leaves the combined one without it.
  const BoardReading partial = set.read();
  CHECK(partial.sm_clock_mhz == 1980.0);
  CHECK_FALSE(partial.power_w.has_value());
  CHECK_THROWS_AS(PowerTelemetrySet({}), std::invalid_argument);
}
