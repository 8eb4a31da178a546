#include "lib/environment/clock_control.hpp"

#include <atomic>
#include <csignal>
#include <vector>

#include <fmt/format.h>

#include "lib/enum_names.hpp"

namespace kibench {

namespace {

// The one control a guard holds locked, for the signal handlers; taken
// (exchanged for nullptr) by whichever unlocks first, so a lock is reset
// once.
std::atomic<ClockControl *> active_control{nullptr};

// The dispositions the handlers replaced, restored when the guard ends and
// before a caught signal is raised again.
struct sigaction previous_interrupt {};
struct sigaction previous_terminate {};

extern "C" void reset_clocks_and_reraise(int signal_number) {
  if (ClockControl *control = active_control.exchange(nullptr)) control->unlock();
  ::sigaction(signal_number, signal_number == SIGINT ? &previous_interrupt : &previous_terminate, nullptr);
  ::raise(signal_number);
}

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = reset_clocks_and_reraise;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, &previous_interrupt);
  ::sigaction(SIGTERM, &action, &previous_terminate);
}

void restore_handlers() {
  ::sigaction(SIGINT, &previous_interrupt, nullptr);
  ::sigaction(SIGTERM, &previous_terminate, nullptr);
}

} // namespace

namespace {
constexpr EnumName<ClockTarget> kClockTargetNames[] = {{ClockTarget::base, "base"}, {ClockTarget::max, "max"}};
} // namespace

std::optional<ClockTarget> clock_target_from_string(std::string_view text) {
  return value_named(kClockTargetNames, text);
}

std::string clock_target_names() {
  return names_listed(kClockTargetNames);
}

std::string_view to_string(ClockTarget target) {
  return name_in(kClockTargetNames, target, "max");
}

ClockState clock_state(const ClockReadings &r) {
  if (r.locked_by_kibench)
    return {true,
            fmt::format("locked by kibench --lock-clocks {}{}", to_string(*r.locked_by_kibench),
                        r.locked_mhz ? fmt::format(" ({} MHz)", *r.locked_mhz) : std::string(" (TDP)"))};
  const bool applications_known = r.applications_sm_mhz && r.default_applications_sm_mhz;
  if (applications_known && *r.applications_sm_mhz != *r.default_applications_sm_mhz)
    return {true, fmt::format("applications clocks set: SM {} MHz (default {} MHz)", *r.applications_sm_mhz,
                              *r.default_applications_sm_mhz)};
  if (r.event_reasons && (*r.event_reasons & kClocksEventApplicationsSetting) != 0)
    return {true, "NVML reports an applications-clocks or locked-clocks setting holding the SM clock"};
  std::vector<std::string> readings;
  if (applications_known)
    readings.push_back(
        fmt::format("applications clocks at their default ({} MHz)", *r.default_applications_sm_mhz));
  if (r.event_reasons)
    readings.push_back(fmt::format("no clock setting in the clock event reasons (0x{:x})", *r.event_reasons));
  if (readings.empty()) return {false, "unknown: NVML gave no clock readings (recorded as not locked)"};
  return {false, fmt::format("not locked: {}", fmt::join(readings, ", "))};
}

ClockLockGuard::ClockLockGuard(ClockControl &control, ClockTarget target,
                               const std::function<void(const std::string &)> &note)
    : control_(control) {
  const ClockState before = clock_state(control.read());
  if (before.locked) {
    note(fmt::format("--lock-clocks {}: the clocks are locked already ({}); left as they are",
                     to_string(target), before.description));
    return;
  }
  std::optional<unsigned> mhz;
  const std::string refused = control.lock(target, mhz);
  if (!refused.empty()) {
    note(fmt::format("--lock-clocks {}: NVML refused ({}); timing on unlocked clocks (locking needs root, or "
                     "`nvidia-smi -lgc` beforehand)",
                     to_string(target), refused));
    return;
  }
  locked_ = true;
  locked_mhz_ = mhz;
  active_control.store(&control_);
  install_handlers();
  note(fmt::format("SM clock locked at {}{} until the run ends", to_string(target),
                   mhz ? fmt::format(" ({} MHz)", *mhz) : std::string(" (TDP)")));
}

ClockLockGuard::~ClockLockGuard() {
  if (!locked_) return;
  // Unlocked before the handlers go: a signal in between finds nothing to
  // reset and is delivered as before.
  if (active_control.exchange(nullptr) == &control_) control_.unlock();
  restore_handlers();
}

} // namespace kibench
