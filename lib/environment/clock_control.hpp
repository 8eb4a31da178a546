// The GPU's clock state, read honestly, and `kibench run --lock-clocks`.
//
// Whether clocks are locked is not one reading in NVML: a lock set with
// nvmlDeviceSetGpuLockedClocks (`nvidia-smi -lgc`) cannot be read back.
// What can be read: the applications clocks against their defaults
// (`nvidia-smi -ac`), and the clock event reasons, whose
// "applications clocks setting" bit is set while such a setting (or a
// locked range) holds the clocks down. kibench calls clocks locked when it
// locked them itself, when the applications clocks differ from their
// defaults, or when that event reason is active; otherwise not, and it says
// which readings it had.
//
// --lock-clocks base|max locks the SM clock at the board's base (TDP)
// clock or at its maximum, as NVBench's --lgc does; NVML allows it to root
// only. ClockLockGuard holds the lock for a scope and resets it when the
// scope ends and when SIGINT or SIGTERM arrives (the signal is then
// delivered as before). Where NVML refuses, the run goes on unlocked with a
// note. The device side is a ClockControl (kernels/cuda/nvml_clock_control
// on a GPU machine), so this logic is tested without one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kibench {

enum class ClockTarget { base, max };
std::optional<ClockTarget> clock_target_from_string(std::string_view text);
// Every name clock_target_from_string reads, as "a, b or c".
std::string clock_target_names();
std::string_view to_string(ClockTarget target);

// NVML's nvmlClocksEventReasonApplicationsClocksSetting: the clocks are
// held by an applications-clocks setting or a locked clock range.
inline constexpr std::uint64_t kClocksEventApplicationsSetting = 0x2;

// What the device reports about its SM clock settings; nullopt where NVML
// has no answer.
struct ClockReadings {
  std::optional<unsigned> applications_sm_mhz;
  std::optional<unsigned> default_applications_sm_mhz;
  std::optional<std::uint64_t> event_reasons; // nvmlDeviceGetCurrentClocksEventReasons
  std::optional<ClockTarget> locked_by_kibench;
  std::optional<unsigned> locked_mhz; // the clock kibench locked at, where it is a number
};

struct ClockState {
  bool locked = false;
  std::string description; // one line: how it is known, or which readings were missing
};

ClockState clock_state(const ClockReadings &readings);

// The device side.
class ClockControl {
public:
  virtual ~ClockControl() = default;
  [[nodiscard]] virtual ClockReadings read() const = 0;
  // Locks the SM clock; "" on success, else NVML's reason ("Insufficient
  // Permissions"). `locked_mhz` gets the clock where it is a number.
  virtual std::string lock(ClockTarget target, std::optional<unsigned> &locked_mhz) = 0;
  // Resets a lock set by lock(). Called from a signal handler too: it must
  // not allocate, lock a mutex or throw.
  virtual void unlock() noexcept = 0;
};

// Holds a lock for its lifetime (RAII) and for the signals that end a run.
// At most one guard is active at a time (the signal handlers serve one).
class ClockLockGuard {
public:
  // Locks unless the clocks are held already (then it leaves them: a lock
  // it cannot read back it could not restore). `note` hears what happened.
  ClockLockGuard(ClockControl &control, ClockTarget target,
                 const std::function<void(const std::string &)> &note);
  ~ClockLockGuard();
  ClockLockGuard(const ClockLockGuard &) = delete;
  ClockLockGuard &operator=(const ClockLockGuard &) = delete;

  // Whether this guard locked the clocks (and will reset them).
  [[nodiscard]] bool locked() const { return locked_; }
  [[nodiscard]] std::optional<unsigned> locked_mhz() const { return locked_mhz_; }

private:
  ClockControl &control_;
  bool locked_ = false;
  std::optional<unsigned> locked_mhz_;
};

} // namespace kibench
