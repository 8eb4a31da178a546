// The clock state as NVML's readings say it, and --lock-clocks' guard:
// locked for a scope, reset when it ends and when SIGINT or SIGTERM
// arrives, left alone where the clocks are held already, and a note (no
// failure) where NVML refuses. A fake ClockControl stands in for NVML.
#include <catch2/catch.hpp>

#include <csignal>
#include <memory>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "lib/environment/clock_control.hpp"
#include "lib/environment/clock_control_set.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/protocol_manifest.hpp"

using namespace kibench;
using Catch::Matchers::Contains;

namespace {

class FakeClocks final : public ClockControl {
public:
  ClockReadings readings;
  std::string refusal; // what lock() answers; "" locks
  int locks = 0, unlocks = 0;
  int unlock_fd = -1; // where unlock() writes, for a forked child

  [[nodiscard]] ClockReadings read() const override { return readings; }
  std::string lock(ClockTarget target, std::optional<unsigned> &locked_mhz) override {
    ++locks;
    if (!refusal.empty()) return refusal;
    if (target == ClockTarget::max) locked_mhz = 1980;
    return "";
  }
  void unlock() noexcept override {
    ++unlocks;
    if (unlock_fd >= 0) (void)!::write(unlock_fd, "unlocked", 8);
  }
};

std::vector<std::string> notes;
void remember(const std::string &line) {
  notes.push_back(line);
}

// The handler SIGTERM has now.
void (*current_handler(int signal_number))(int) {
  struct sigaction action {};
  ::sigaction(signal_number, nullptr, &action);
  return action.sa_handler;
}

} // namespace

TEST_CASE("clock state: locked only where a reading says so, and how it is known", "[clocks]") {
  ClockReadings r;
  CHECK_FALSE(clock_state(r).locked);
  CHECK(clock_state(r).description == "unknown: NVML gave no clock readings (recorded as not locked)");

  r.applications_sm_mhz = 1980;
  r.default_applications_sm_mhz = 1980;
  r.event_reasons = 0x4; // the power cap: no clock setting
  CHECK_FALSE(clock_state(r).locked);
  CHECK(clock_state(r).description == "not locked: applications clocks at their default (1980 MHz), no clock "
                                      "setting in the clock event reasons (0x4)");

  r.event_reasons = 0x6; // the applications-clocks / locked-clocks setting holds the clock
  CHECK(clock_state(r).locked);
  CHECK_THAT(clock_state(r).description, Contains("locked-clocks setting"));

  r.event_reasons = 0x0;
  r.applications_sm_mhz = 1590; // nvidia-smi -ac
  CHECK(clock_state(r).locked);
  CHECK(clock_state(r).description == "applications clocks set: SM 1590 MHz (default 1980 MHz)");

  r.locked_by_kibench = ClockTarget::max;
  r.locked_mhz = 1980;
  CHECK(clock_state(r).description == "locked by kibench --lock-clocks max (1980 MHz)");
  CHECK(clock_target_from_string("base") == ClockTarget::base);
  CHECK_FALSE(clock_target_from_string("boost").has_value());
}

TEST_CASE("the clock lock guard locks for its scope and resets at its end", "[clocks]") {
  FakeClocks clocks;
  notes.clear();
  const auto before = current_handler(SIGTERM);
  {
    ClockLockGuard guard(clocks, ClockTarget::max, remember);
    CHECK(guard.locked());
    CHECK(guard.locked_mhz() == 1980u);
    CHECK(clocks.locks == 1);
    CHECK(clocks.unlocks == 0);
    // SIGINT and SIGTERM now reset the clocks first.
    CHECK(current_handler(SIGTERM) != before);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "SM clock locked at max (1980 MHz) until the run ends");
  }
  CHECK(clocks.unlocks == 1);
  CHECK(current_handler(SIGTERM) == before);
}

TEST_CASE("a clock lock fails soft where NVML refuses, and leaves clocks held already", "[clocks]") {
  notes.clear();
  FakeClocks refusing;
  refusing.refusal = "Insufficient Permissions";
  {
    ClockLockGuard guard(refusing, ClockTarget::base, remember);
    CHECK_FALSE(guard.locked());
  }
  CHECK(refusing.unlocks == 0);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Contains("--lock-clocks base: NVML refused (Insufficient Permissions); timing on "
                                "unlocked clocks"));

  notes.clear();
  FakeClocks held;
  held.readings.applications_sm_mhz = 1590;
  held.readings.default_applications_sm_mhz = 1980;
  {
    ClockLockGuard guard(held, ClockTarget::base, remember);
    CHECK_FALSE(guard.locked());
  }
  CHECK(held.locks == 0);
  CHECK(held.unlocks == 0);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Contains("the clocks are locked already (applications clocks set"));
}

// In a child process: the guard locks, the signal arrives, the clocks are
// reset and the signal still ends the process as it would have.
TEST_CASE("SIGINT and SIGTERM reset locked clocks, then end the process as before", "[clocks]") {
  for (const int signal_number : {SIGTERM, SIGINT}) {
    CAPTURE(signal_number);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(fds[0]);
      ::signal(signal_number, SIG_DFL);
      FakeClocks clocks;
      clocks.unlock_fd = fds[1];
      ClockLockGuard guard(clocks, ClockTarget::base, [](const std::string &) {});
      ::raise(signal_number);
      ::_exit(3); // not reached: the signal ends the child
    }
    ::close(fds[1]);
    char buffer[16] = {};
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0) == "unlocked");
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
  }
}

TEST_CASE("the protocol records clocks kibench locked", "[clocks]") {
  ProtocolSettings s;
  s.timer = "cuda_events";
  CHECK(json::member_at(protocol_manifest(s, "oracle-fp64", {}), "spec.devicePolicy.clocksLocked")->as_bool() ==
        false);
  s.clocks_locked = true;
  CHECK(json::member_at(protocol_manifest(s, "oracle-fp64", {}), "spec.devicePolicy.clocksLocked")->as_bool());
}

TEST_CASE("a multi-GPU run's clocks lock all together or not at all", "[clocks][multi_gpu]") {
  auto make = [](std::string refusal) {
    auto f = std::make_unique<FakeClocks>();
    f->refusal = std::move(refusal);
    return f;
  };
  SECTION("every device locks, and unlocks") {
    std::vector<std::unique_ptr<ClockControl>> devices;
    std::vector<FakeClocks *> fakes;
    for (int i = 0; i < 3; ++i) {
      auto f = make("");
      fakes.push_back(f.get());
      devices.push_back(std::move(f));
    }
    ClockControlSet set(std::move(devices));
    std::optional<unsigned> mhz;
    CHECK(set.lock(ClockTarget::max, mhz).empty());
    CHECK(mhz == 1980u);
    for (const FakeClocks *f : fakes) CHECK(f->locks == 1);
    set.unlock();
    for (const FakeClocks *f : fakes) CHECK(f->unlocks == 1);
  }
  SECTION("a refusal resets the ones locked before it and names the GPU") {
    std::vector<std::unique_ptr<ClockControl>> devices;
    auto a = make(""), b = make(""), c = make("Insufficient Permissions");
    FakeClocks *fa = a.get(), *fb = b.get(), *fc = c.get();
    devices.push_back(std::move(a));
    devices.push_back(std::move(b));
    devices.push_back(std::move(c));
    ClockControlSet set(std::move(devices));
    std::optional<unsigned> mhz;
    CHECK(set.lock(ClockTarget::base, mhz) == "GPU 2: Insufficient Permissions");
    CHECK_FALSE(mhz.has_value());
    CHECK(fa->unlocks == 1);
    CHECK(fb->unlocks == 1);
    CHECK(fc->unlocks == 0);
  }
  SECTION("locked only where every device reads locked") {
    std::vector<std::unique_ptr<ClockControl>> devices;
    auto a = make(""), b = make("");
    a->readings.event_reasons = 0x2; // held by a clock setting
    b->readings.event_reasons = 0x4; // the power cap only
    FakeClocks *fb = b.get();
    devices.push_back(std::move(a));
    devices.push_back(std::move(b));
    ClockControlSet set(std::move(devices));
    CHECK_FALSE(clock_state(set.read()).locked);
    fb->readings.event_reasons = 0x2;
    CHECK(clock_state(set.read()).locked);
  }
  CHECK_THROWS_AS(ClockControlSet({}), std::invalid_argument);
}
