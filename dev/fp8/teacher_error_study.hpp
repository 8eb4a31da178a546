// What an FP8 teacher costs in accuracy, computed on the CPU in fp64 before
// any device time. For a sample of token rows of a workload (its own
// deterministic inputs: only the sampled rows of x_s, x_t and y are
// generated, the LM heads a slice of vocabulary rows at a time), the loss
// terms and the student gradients are computed once with the bf16 teacher
// inputs as stored and once per recipe with x_t and W_t rounded through
// e4m3 at the recipe's scaling granularity (kernels/lm_head/fused/e4m3_scaling.hpp),
// and compared the way the workload's policy compares an implementation
// with the oracle (relative L2 error of each output):
//   loss      over the sampled rows (N = their valid count)
//   grad x_s  the sampled rows
//   grad W_s  the sampled rows' contribution, Σ_i G[i, :]ᵀ x_s[i], also for
//             the nested quarter and half of the sample (rows k ≡ 0 mod 4,
//             then k ≡ 0 mod 2), to see how the error scales with the rows
//             summed (grad W_s of a full pass sums all T)
//   grad b_s  likewise, where the student has a bias.
// And where the error comes from, per recipe: the teacher logits' error
// (relative L2 and RMS), the teacher probabilities' (relative L2 of p over
// the sample), and G's, against all of G and against its soft part
// G − w_h (softmax(z_s) − onehot(y)) / N, the only part the teacher enters.
// Every sum runs in a fixed order: results do not depend on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/lm_head/fused/e4m3_scaling.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::dev {

// How the teacher's operands are rounded: nullopt keeps them bf16. x_t's
// blocks must be one row high (only the sampled rows exist here).
struct TeacherRecipe {
  std::string name;
  std::optional<e4m3::BlockShape> input;  // x_t [T, H]
  std::optional<e4m3::BlockShape> weight; // W_t [V, H]
};

// bf16 (the reference), the outer-vector recipe `fused-fp8-teacher` runs,
// each of its operands alone, DeepSeek-V3's 1 x 128 / 128 x 128 blocks
// (cuBLASLt's VEC128_32F and BLK128x128_32F), and 1 x 128 blocks on both.
[[nodiscard]] std::vector<TeacherRecipe> standard_recipes();

// Relative L2 errors against the bf16 teacher (recipe 0), and the sources.
struct RecipeError {
  std::string name;
  double loss = 0.0;
  double loss_relative = 0.0;
  double grad_input = 0.0;                   // grad x_s, sampled rows
  std::vector<double> grad_weight;           // grad W_s, per nested subset (quarter, half, all)
  std::vector<std::int64_t> subset_rows;     // the rows each of those sums
  std::optional<double> grad_bias;           // grad b_s, all sampled rows
  double teacher_logit_relative = 0.0;       // ||Δz_t|| / ||z_t||
  double teacher_logit_rms = 0.0;            // sqrt(mean Δz_t²)
  double teacher_probability_relative = 0.0; // ||Δp|| / ||p||
  double logit_gradient_relative = 0.0;      // ||ΔG|| / ||G||
  double soft_gradient_relative = 0.0;       // ||ΔG|| / ||G_soft||
};

struct StudyResult {
  std::vector<std::int64_t> rows; // the sampled token rows, ascending
  std::int64_t valid_rows = 0;
  std::vector<RecipeError> recipes; // recipes[0] is the reference (all errors 0)
  double seconds = 0.0;
};

// The sampled rows: S evenly spread rows of T, row k at floor((2k + 1) T / 2S).
[[nodiscard]] std::vector<std::int64_t> sample_rows(std::int64_t tokens, std::int64_t samples);

// Runs the study; `progress` (if set) gets a line now and then. recipes[0]
// must keep both operands bf16. Throws std::invalid_argument for a
// workload whose tensors are not philox uniforms (its generators are
// those kibench's InputSet uses), a jsd workload, or a bad recipe.
[[nodiscard]] StudyResult
run_teacher_error_study(const Workload &w, const std::vector<std::int64_t> &rows,
                        const std::vector<TeacherRecipe> &recipes,
                        const std::function<void(const std::string &)> &progress = {});

// The fp64 reference arrays of a study, for checking the study itself
// against the oracle on small cases: every sampled row's loss-side outputs
// computed by the study with the bf16 teacher.
struct StudyReference {
  double loss = 0.0;
  std::vector<double> grad_input;  // [S, Hs]
  std::vector<double> grad_weight; // [V, Hs], all sampled rows
  std::vector<double> grad_bias;   // [V] or empty
};

// The same computation as run_teacher_error_study for one recipe, keeping
// the outputs (small cases only: it holds [V, Hs]).
[[nodiscard]] StudyReference study_outputs(const Workload &w, const std::vector<std::int64_t> &rows,
                                           const TeacherRecipe &recipe);

} // namespace kibench::dev
