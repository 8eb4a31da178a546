#include "lib/calibration/sentinels.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/core.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/stats/summary.hpp"

namespace kibench::calibration {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename Body> double median_seconds(int repetitions, Body &&body) {
  std::vector<double> s;
  s.reserve(static_cast<std::size_t>(repetitions));
  for (int r = 0; r < repetitions; ++r) {
    const auto start = Clock::now();
    body();
    s.push_back(seconds_since(start));
  }
  return stats::median(std::move(s));
}

// A system call that does no work: the host's unit of dispatch.
double launch_us() {
  constexpr int kCalls = 2000;
  const double s = median_seconds(15, [] {
    for (int k = 0; k < kCalls; ++k) ::syscall(SYS_getppid);
  });
  return s / kCalls * 1e6;
}

// memcpy between two 64 MiB buffers (touched first, so no page faults).
double copy_gbps() {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::vector<unsigned char> from(kBytes, 1), to(kBytes, 0);
  std::memcpy(to.data(), from.data(), kBytes);
  const double s = median_seconds(7, [&] {
    std::memcpy(to.data(), from.data(), kBytes);
    from[0] = static_cast<unsigned char>(to[kBytes - 1] + 1); // keeps the copies distinct
  });
  // Read and written: twice the bytes move.
  return 2.0 * static_cast<double>(kBytes) / s / 1e9;
}

// Independent fp32 multiply-add chains, wide enough to fill the pipes.
double compute_gflops() {
  constexpr int kChains = 16, kSteps = 1 << 17;
  volatile float seed = 1.0f;
  const double s = median_seconds(9, [&] {
    std::array<float, kChains> acc{};
    for (int c = 0; c < kChains; ++c) acc[c] = seed + static_cast<float>(c);
    const float a = 0.999999f, b = 1e-7f;
    for (int k = 0; k < kSteps; ++k)
      for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
    float sum = 0.0f;
    for (float x : acc) sum += x;
    seed = sum > 0.0f ? 1.0f : 2.0f; // keeps the work
  });
  return 2.0 * kChains * static_cast<double>(kSteps) / s / 1e9;
}

} // namespace

SentinelSet host_sentinels() {
  SentinelSet set;
  set.device = "host CPU";
  set.readings.push_back({"launch", "us", launch_us(), false});
  set.readings.push_back({"copy", "GB/s", copy_gbps(), true});
  set.readings.push_back({"compute", "GFLOP/s", compute_gflops(), true});
  return set;
}

std::string describe(const SentinelSet &set) {
  std::string out;
  for (const SentinelReading &r : set.readings)
    out += fmt::format("{}{} {:.3g} {}", out.empty() ? "" : ", ", r.name, r.value, r.unit);
  return out;
}

} // namespace kibench::calibration
