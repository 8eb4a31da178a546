// The distillation loss with the LM heads sharded along the vocabulary
// (docs/loss-math.md, "Vocabulary-parallel"), in fp64 on the host: each
// rank computes its slice of both logit matrices, and a row's softmax and
// KL sums are assembled from a few numbers per row and rank.
//
// Per rank r with vocabulary rows [b_r, e_r), per token row i:
//   1. local logits z_s,r = x_s W_s[b_r:e_r]ᵀ, z_t,r likewise;
//   2. all-reduce max of three row maxima: of z_s (for CE), of z_s/τ and of
//      z_t/τ (for q and p);
//   3. all-reduce sum of the three sums of exp(x − max) and of z_s[y] (the
//      rank holding y adds it, the others 0): every rank now has
//      lse(z_s), lse(z_s/τ), lse(z_t/τ) and the target logit;
//   4. all-reduce sum of the KL partial sums over the slice (KL(p‖m) and
//      KL(q‖m) for 0 < β < 1, KL(p‖q) for β = 0, KL(q‖p) for β = 1): every
//      rank has CE_i, J_i and the loss;
//   5. the slice of G from the global statistics; grad W_s and grad b_s rows
//      of the slice stay on their rank, grad x_s = Σ_r G_r W_s[r] is an
//      all-reduce sum.
// Communication per token row: 3 maxima, 4 sums, 2 sums, then Hs sums for
// grad x_s — O(T·Hs) against the O(T·V·H) the ranks share out.
#pragma once

#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "kernels/lm_head/vocab_parallel/vocab_shards.hpp"
#include "test/models/communicator.hpp"

namespace kibench::vocab_parallel {

// Every rank of `communicator` driven here, one after another, and the
// loss and gradients put together as one device would hold them (grad W_s
// and grad b_s from the ranks' rows in order). The same numbers as
// run_oracle up to the order of the sums.
[[nodiscard]] OracleResult sharded_oracle(const OracleProblem &problem, Communicator &communicator,
                                          bool with_gradients = true);

} // namespace kibench::vocab_parallel
