#include "lib/run/memory_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kibench {

namespace {
constexpr std::size_t kMaxDescribedGroups = 600;
} // namespace

std::uint64_t lane_slack_bytes(std::uint64_t device_bytes) {
  if (device_bytes == 0) return 0;
  return std::max<std::uint64_t>(device_bytes / 20, std::uint64_t{256} << 20);
}

namespace {
// A lane's need as the plan counts it.
std::uint64_t planned_bytes(const LaneNeed &need) {
  return need.device_bytes + lane_slack_bytes(need.device_bytes);
}
} // namespace

bool answers_fit_on_device(const std::vector<LaneNeed> &needs, const std::vector<std::vector<std::size_t>> &groups,
                           std::uint64_t answers_bytes, std::uint64_t margin_bytes, std::uint64_t free_bytes) {
  if (answers_bytes == 0) return false;
  for (const auto &group : groups) {
    std::uint64_t sum = 0;
    for (const std::size_t lane : group) {
      const std::uint64_t planned = planned_bytes(needs[lane]);
      sum += planned + (needs[lane].foreign ? planned / 4 : 0);
    }
    if (sum + answers_bytes + margin_bytes > free_bytes) return false;
  }
  return true;
}

std::uint64_t largest_group_bytes(const std::vector<LaneNeed> &needs,
                                  const std::vector<std::vector<std::size_t>> &groups) {
  std::uint64_t largest = 0;
  for (const auto &group : groups) {
    std::uint64_t sum = 0;
    for (const std::size_t lane : group) sum += planned_bytes(needs[lane]);
    largest = std::max(largest, sum);
  }
  return largest;
}

std::vector<std::vector<std::size_t>> plan_timing_groups(const std::vector<LaneNeed> &needs,
                                                         std::uint64_t room_bytes) {
  // Smallest first: the kernels and the floors they are held to share one
  // group's rounds, and the lanes that materialize [T, V] tensors get the
  // groups that are left. Ties keep the given order.
  std::vector<std::size_t> order(needs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return needs[a].device_bytes < needs[b].device_bytes;
  });
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::uint64_t> used;
  for (const std::size_t lane : order) {
    const std::uint64_t need = planned_bytes(needs[lane]);
    bool placed = false;
    for (std::size_t g = 0; g < groups.size() && !placed; ++g) {
      if (used[g] + need <= room_bytes) {
        groups[g].push_back(lane);
        used[g] += need;
        placed = true;
      }
    }
    if (!placed) {
      groups.push_back({lane});
      used.push_back(need);
    }
  }
  return groups;
}

std::string describe_timing_groups(const std::vector<LaneNeed> &needs,
                                   const std::vector<std::vector<std::size_t>> &groups) {
  std::string text = fmt::format("{} group{}:", groups.size(), groups.size() == 1 ? "" : "s");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::string names;
    for (const std::size_t lane : groups[g]) names += (names.empty() ? "" : ", ") + needs[lane].name;
    text += fmt::format("{}[{}]", g == 0 ? " " : " then ", names);
  }
  // The protocol's description holds 2000 characters: long names give way
  // to the groups' sizes.
  if (text.size() <= kMaxDescribedGroups) return text;
  text = fmt::format("{} groups of", groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    text += fmt::format("{}{}", g == 0 ? " " : g + 1 == groups.size() ? " and " : ", ", groups[g].size());
  return text + " lanes";
}

std::string format_gib(std::uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30));
}

} // namespace kibench
