// The order in which the implementations of one `kibench run` take their
// samples within an interleave round. A fixed order would give each
// implementation the same place in every round, after the same neighbour:
// on a GPU at its power limit the sample after a heavy one starts hotter,
// and a same-run A/B of two GEMM-bound implementations moved by ~2 % when
// their places swapped (docs/perf.md). The rounds follow a Williams design
// instead: over a cycle of n rounds (2n for odd n), every implementation
// takes every place equally often and comes straight after every other one
// equally often, so a paired comparison averages the places out.
#pragma once

#include <cstddef>
#include <vector>

namespace kibench {

// Rounds after which the design repeats: n for even n, 2n for odd n (the
// mirrored rows balance the neighbours), 1 for a single implementation.
[[nodiscard]] std::size_t interleave_cycle(std::size_t implementations);

// The implementations' indices (0 .. n-1, in the order they were given) in
// the order they sample in `round`.
[[nodiscard]] std::vector<std::size_t> interleave_order(std::size_t implementations, std::size_t round);

} // namespace kibench
