// A machine's calibration history and the judgement of a run's sentinels
// against it (sentinels.hpp). The history is one JSON line per clean run,
// in a file per machine and device under $KIBENCH_CALIBRATION_DIR, else
// $XDG_CACHE_HOME/kibench/calibration, else ~/.cache/kibench/calibration.
//
// Control limits, per sentinel, from the last kHistoryWindow entries (at
// least kMinHistory): the median m ± max(4·σ̂, f·m), where σ̂ = 1.4826·MAD
// is the median absolute deviation scaled to a normal's σ (robust to the
// odd bad run) and f the sentinel's relative floor: 10 %, 25 % for the
// launch latency (a host-side time that moves with the core and the
// scheduler: 8.9–10.1 µs between quiet runs on one H100). A reading below
// them (above, for a latency), or one that moved by more than max(f, the
// band's share of m) between the workload's start and end, is a caveat;
// one better than them is noted in the basis only.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/calibration/sentinels.hpp"

namespace kibench::calibration {

inline constexpr std::size_t kHistoryWindow = 30;
inline constexpr std::size_t kMinHistory = 5;
inline constexpr double kDriftLimit = 0.10;
inline constexpr double kLaunchFloor = 0.25;

// f above: kLaunchFloor for "launch", kDriftLimit for the others.
double relative_floor(std::string_view sentinel);

// The folder the history lives in; nullopt when no folder can be named.
std::optional<std::filesystem::path> history_dir();
// This machine's file for `device` in `dir`.
std::filesystem::path history_file(const std::filesystem::path &dir, const std::string &device);

// The last kHistoryWindow entries for `device` (oldest first); a missing
// file is an empty history, a line that is not an entry is skipped.
std::vector<SentinelSet> read_history(const std::filesystem::path &file, const std::string &device);
// Appends one entry (one write, O_APPEND: concurrent runs do not tear
// lines). Throws std::runtime_error naming the file.
void append_history(const std::filesystem::path &file, const SentinelSet &set);

struct Judgement {
  std::vector<std::string> caveats; // empty: within the limits and steady
  std::string basis;                // "control limits from 12 earlier runs", or why there are none
};

Judgement judge(const std::vector<SentinelSet> &history, const SentinelSet &before, const SentinelSet &after);

} // namespace kibench::calibration
