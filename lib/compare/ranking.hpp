// Ranking the rankable members of one cohort.
//
// Members are ordered by median (fastest first; equal medians keep the
// order given). Ranks are built in tiers: the fastest member leads the
// first tier; each following member joins the current tier unless it is
// significantly slower than the tier's leader (the verdict of their
// comparison: interval excludes zero and the effect exceeds the threshold),
// in which case it leads a new tier. Every member
// of a tier shares its rank, numbered like a competition (1, 1, 3): one
// plus the number of members in faster tiers. So a strict ordering appears
// exactly where a significant difference exists, and nobody in a tier is
// significantly slower than its leader.
//
// Comparing with the leader rather than the neighbour keeps a chain of
// small, individually insignificant steps from sharing one rank forever:
// once they add up to a significant gap with the leader, a new tier starts.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "lib/compare/compared_run.hpp"

namespace kibench::compare {

struct RankEntry {
  std::size_t run = 0;         // index into the runs
  std::size_t rank = 1;        // competition rank, 1 = fastest tier
  std::size_t tier_leader = 0; // the leader of its tier (itself for a leader)
};

// slower(leader, member): whether `member` is significantly slower than
// `leader` (the verdict "slower" of their comparison).
using SlowerThan = std::function<bool(std::size_t leader, std::size_t member)>;

std::vector<RankEntry> rank_members(const std::vector<ComparedRun> &runs, std::vector<std::size_t> members,
                                    const SlowerThan &slower);

} // namespace kibench::compare
