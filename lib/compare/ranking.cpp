#include "lib/compare/ranking.hpp"

#include <algorithm>
#include <limits>

namespace kibench::compare {

std::vector<RankEntry> rank_members(const std::vector<ComparedRun> &runs, std::vector<std::size_t> members,
                                    const SlowerThan &slower) {
  const auto median = [&](std::size_t i) {
    return runs[i].median_ns.value_or(std::numeric_limits<double>::infinity());
  };
  std::stable_sort(members.begin(), members.end(),
                   [&](std::size_t a, std::size_t b) { return median(a) < median(b); });
  std::vector<RankEntry> out;
  std::size_t leader = 0, rank = 1;
  for (std::size_t position = 0; position < members.size(); ++position) {
    const std::size_t run = members[position];
    if (position == 0 || slower(leader, run)) {
      leader = run;
      rank = position + 1;
    }
    out.push_back(RankEntry{run, rank, leader});
  }
  return out;
}

} // namespace kibench::compare
