// Which lanes of a workload are timed together. Every lane is checked
// alone (its own peak measured while nothing else but kibench's inputs is
// on the device); lanes are then timed in groups whose needs fit the device
// together, so a lane that fits the board alone never fails for its
// neighbours. Shared rounds apply within a group; the groups are recorded
// in the protocol and in each run's labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kibench {

struct LaneNeed {
  std::string name;
  std::uint64_t device_bytes = 0; // the lane's own peak on the device (0 for a host lane)
  // Measured by the lane's own allocator in a process of its own (a plugin
  // or Python lane in its worker), whose timed steady state can hold more
  // than its checked peak (a caching allocator's reserve, the previous
  // sample's graph). kibench's own lanes' peaks are kibench's count.
  bool foreign = false;
};

// Each group is a list of indices into `needs`. Lanes are placed smallest
// need first (ties in their given order): each joins the first group whose
// needs, each with its slack (lane_slack_bytes), still fit `room_bytes`,
// else starts a new group; a lane larger than the room gets a group of its
// own (it was checked alone, so it fits alone). Host lanes need nothing
// and always share the first group.
std::vector<std::vector<std::size_t>> plan_timing_groups(const std::vector<LaneNeed> &needs,
                                                         std::uint64_t room_bytes);

// What a lane may hold beyond its measured peak: fragmentation of its
// allocator's cache and libraries' own buffers; 5 % and at least 256 MiB.
std::uint64_t lane_slack_bytes(std::uint64_t device_bytes);

// Whether the oracle's answers for the timed checks (`answers_bytes`) stay
// on the device beside every group, with `margin_bytes` to spare in
// `free_bytes`. Each group counts as largest_group_bytes counts it, and its
// foreign lanes a quarter more: answers on the host only make the checks
// slower, where answers on the device can take a lane's memory. On an H100
// (2026-12-06) torch-eager-jsd-script, checked at 50.9 GiB, ran out at over
// 55 GiB timed beside 16.8 GB of jsd answers at T 8192, V 128256.
[[nodiscard]] bool answers_fit_on_device(const std::vector<LaneNeed> &needs,
                                         const std::vector<std::vector<std::size_t>> &groups,
                                         std::uint64_t answers_bytes, std::uint64_t margin_bytes,
                                         std::uint64_t free_bytes);

// The most any one group holds as plan_timing_groups counts it (each
// lane's need with its slack): what stays taken while the lanes run.
std::uint64_t largest_group_bytes(const std::vector<LaneNeed> &needs,
                                  const std::vector<std::vector<std::size_t>> &groups);

// "2 groups: [reference] then [fused, cublas-floor, torch-eager, liger]".
std::string describe_timing_groups(const std::vector<LaneNeed> &needs,
                                   const std::vector<std::vector<std::size_t>> &groups);

// Bytes as "12.3 GiB".
std::string format_gib(std::uint64_t bytes);

} // namespace kibench
