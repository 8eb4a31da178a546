#include "compare/ranking.hpp"

#include <algorithm>
#include <limits>

namespace kibench::compare {

std::vector<RankEntry> rank_members(const std::vector<ComparedRun> &runs, std::vector<std::size_t> members,
                                    const PairFunction &compare) {
  const auto median = [&](std::size_t i) {
    return runs[i].median_ns.value_or(std::numeric_limits<double>::infinity());
  };
  std::stable_sort(members.begin(), members.end(),
                   [&](std::size_t a, std::size_t b) { return median(a) < median(b); });
  std::vector<RankEntry> out;
  std::size_t leader = 0, rank = 1;
  for (std::size_t position = 0; position < members.size(); ++position) {
    const std::size_t run = members[position];
    RankEntry entry;
    entry.run = run;
    if (position == 0) {
      leader = run;
    } else {
      PairComparison versus = compare(leader, run);
      if (versus.verdict == Verdict::slower) {
        leader = run;
        rank = position + 1;
      } else {
        entry.vs_leader = std::move(versus);
      }
    }
    entry.rank = rank;
    entry.tier_leader = leader;
    out.push_back(std::move(entry));
  }
  return out;
}

} // namespace kibench::compare
