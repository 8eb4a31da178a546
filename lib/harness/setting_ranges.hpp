// The range of every measurement setting kibench accepts, from `kibench run`
// flags or another harness's result (`import external`), and the longest
// sample any reader accepts. Outside them a value is bad input: a negative
// warm-up count that wraps to 2^64 - 1 would never finish, an infinite
// timeout cannot be converted to a clock duration, and a sample of 1e19 ns
// overflows the 64-bit integers a run manifest writes nanoseconds as.
// docs/guide.md lists the flags' ranges.
#pragma once

#include <cstdint>

namespace kibench::setting_ranges {

inline constexpr std::uint64_t kMaxWarmupRuns = 100000;
// Samples per implementation: at about 135 bytes a sample, 100000 keep a
// raw-samples file well inside io::file_kinds::manifest's cap.
inline constexpr std::uint64_t kMaxSamples = 100000;
// Seconds: a day.
inline constexpr double kMaxMinTimeS = 86400.0;
inline constexpr double kMaxTimeoutS = 86400.0;
// An hour of back-to-back invocations per implementation.
inline constexpr double kMaxSustainedS = 3600.0;
// Rounds of the sustained phase: a hundred turns of each implementation.
inline constexpr std::uint64_t kMaxSustainedRounds = 100;
// A relative standard error above 20 % stops at the first samples; a value
// there is a percentage given as a fraction (0.5 meant as 0.5 %).
inline constexpr double kMaxNoise = 0.2;
// --gpus: one host's GPUs (NCCL's single-process communicators, CUDA's
// device numbering); far above the 8 of an HGX board.
inline constexpr std::uint64_t kMaxGpus = 64;
// --repetitions: whole invocations; a thousand is days of GPU time.
inline constexpr std::uint64_t kMaxRepetitions = 1000;
// An SM clock in MHz (another harness's samples): GPUs run at about 2 GHz;
// 100 GHz is no clock at all.
inline constexpr double kMaxSmClockMhz = 100000.0;
// 2^53 - 1 ns (104 days), KernelIndex's largest integer: a sample's
// nanoseconds must be exact as a JSON number and as a 64-bit integer.
inline constexpr double kMaxSampleNs = 9007199254740991.0;

} // namespace kibench::setting_ranges
