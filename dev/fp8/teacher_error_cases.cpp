// The FP8 teacher's error on the CPU (teacher_error_study.hpp), and the
// study's own arithmetic against the fp64 oracle:
//   build/dev/kibench_dev "[fp8-teacher-error]"        the seed workload, 256 sampled
//                                                      token rows, every recipe
//                                                      (~10 minutes on 2 cores)
//   build/dev/kibench_dev "[fp8-teacher-error-check]"  small cases, a few seconds (ctest runs it)
// docs/perf.md ("The FP8 teacher") records what the first printed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dev/fp8/teacher_error_study.hpp"
#include "kernels/lm_head/fused/e4m3_scaling.hpp"
#include "kernels/lm_head/oracle/cpu_oracle.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/parallel/parallel_for.hpp"
#include "lib/workload/workload.hpp"
#include "test/test_gpu_support.hpp"

using namespace kibench;

namespace {

// Token rows of the seed the study samples: enough for grad x_s's error
// (a per-row quantity) to two digits and for grad W_s's trend over 64, 128
// and 256 rows, within ~10 minutes of two cores.
constexpr std::int64_t kSeedSampleRows = 256;

double relative_l2(const std::vector<double> &out, const std::vector<double> &ref) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// The oracle's problem of rows `rows` of the workload, the teacher's inputs
// as `recipe` rounds them (x_t's blocks are one row high, so rounding the
// whole x_t and then taking rows is the same as the study's rows alone).
OracleProblem oracle_of_rows(const Workload &w, InputSet &inputs, const std::vector<std::int64_t> &rows,
                             const dev::TeacherRecipe &recipe) {
  const HostInputs &host = inputs.host();
  OracleProblem full = oracle_problem(w, host);
  if (recipe.input)
    full.teacher_input =
        e4m3::dequantize(e4m3::quantize(host.teacher_input, w.tokens, w.hidden, *recipe.input));
  if (recipe.weight)
    full.teacher_weight =
        e4m3::dequantize(e4m3::quantize(host.teacher_weight, w.vocab, w.hidden, *recipe.weight));
  OracleProblem p = full;
  p.tokens = static_cast<std::int64_t>(rows.size());
  p.student_input.clear();
  p.teacher_input.clear();
  p.target.clear();
  for (const std::int64_t i : rows) {
    const auto row = [&](const std::vector<double> &m, std::int64_t width) {
      return std::vector<double>(m.begin() + i * width, m.begin() + (i + 1) * width);
    };
    const auto xs = row(full.student_input, w.student_hidden), xt = row(full.teacher_input, w.hidden);
    p.student_input.insert(p.student_input.end(), xs.begin(), xs.end());
    p.teacher_input.insert(p.teacher_input.end(), xt.begin(), xt.end());
    p.target.push_back(full.target[static_cast<std::size_t>(i)]);
  }
  return p;
}

std::string errors_line(const dev::RecipeError &e) {
  std::string weight;
  for (std::size_t k = 0; k < e.grad_weight.size(); ++k)
    weight += fmt::format("{}{:.2e}", k == 0 ? "" : " / ", e.grad_weight[k]);
  return fmt::format("{:<42} {:>9.2e} {:>9.2e}  {:<29} {}", e.name, e.loss_relative, e.grad_input, weight,
                     e.grad_bias ? fmt::format("{:.2e}", *e.grad_bias) : std::string("-"));
}

} // namespace

TEST_CASE("the FP8 teacher error study computes what the fp64 oracle computes", "[fp8-teacher-error-check]") {
  // V = 2500: three vocabulary slices (the last 452 rows) and a partial
  // 128 x 128 tile; H = 200: a partial 1 x 128 run; a bias on both heads,
  // tau = 2, ignored tokens.
  const Workload w = test::make_gpu_workload({.name = "fp8-study-check",
                                              .tokens = 40,
                                              .vocab = 2500,
                                              .hidden = 200,
                                              .temperature = 2.0,
                                              .ignore_fraction = 0.25,
                                              .bias = true,
                                              .seed = 71});
  InputSet inputs(w);
  const std::vector<dev::TeacherRecipe> recipes = dev::standard_recipes();
  std::vector<std::int64_t> all(static_cast<std::size_t>(w.tokens));
  std::iota(all.begin(), all.end(), 0);
  for (const std::vector<std::int64_t> &rows : {all, dev::sample_rows(w.tokens, 7)}) {
    for (const dev::TeacherRecipe &recipe : recipes) {
      INFO(recipe.name << ", " << rows.size() << " rows");
      const dev::StudyReference study = dev::study_outputs(w, rows, recipe);
      const OracleResult oracle = run_oracle(oracle_of_rows(w, inputs, rows, recipe));
      CHECK(std::abs(study.loss - oracle.loss) <= 1e-12 * std::abs(oracle.loss));
      CHECK(relative_l2(study.grad_input, oracle.gradients.student_input) <= 1e-12);
      CHECK(relative_l2(study.grad_weight, oracle.gradients.student_weight) <= 1e-12);
      CHECK(relative_l2(study.grad_bias, oracle.gradients.student_bias) <= 1e-12);
    }
  }
  // The study's errors are those of these outputs against the reference's.
  const std::vector<std::int64_t> rows = dev::sample_rows(w.tokens, 20);
  const dev::StudyResult result = dev::run_teacher_error_study(w, rows, recipes);
  REQUIRE(result.recipes.size() == recipes.size());
  const dev::StudyReference reference = dev::study_outputs(w, rows, recipes[0]);
  CHECK(result.recipes[0].loss == reference.loss);
  CHECK(result.recipes[0].grad_input == 0.0);
  CHECK(result.recipes[0].teacher_logit_relative == 0.0);
  CHECK(result.valid_rows == std::count_if(rows.begin(), rows.end(), [&](std::int64_t i) {
          return inputs.host().target[static_cast<std::size_t>(i)] != w.scalars.ignore_index;
        }));
  // Subsets: rows k = 0 mod 4 (5), then k = 0 mod 2 (10), then all 20. A
  // subset's grad W has its own N, a common factor its relative error
  // does not see.
  CHECK(result.recipes[1].subset_rows == std::vector<std::int64_t>{5, 10, 20});
  std::vector<std::vector<std::int64_t>> subsets(2);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (k % 4 == 0) subsets[0].push_back(rows[k]);
    if (k % 2 == 0) subsets[1].push_back(rows[k]);
  }
  for (std::size_t r = 1; r < recipes.size(); ++r) {
    INFO(recipes[r].name);
    const dev::StudyReference out = dev::study_outputs(w, rows, recipes[r]);
    const dev::RecipeError &e = result.recipes[r];
    CHECK(e.loss == Approx(out.loss).epsilon(1e-14));
    CHECK(e.grad_input == Approx(relative_l2(out.grad_input, reference.grad_input)).epsilon(1e-9));
    REQUIRE(e.grad_weight.size() == 3);
    CHECK(e.grad_weight.back() == Approx(relative_l2(out.grad_weight, reference.grad_weight)).epsilon(1e-9));
    for (std::size_t k = 0; k < subsets.size(); ++k) {
      INFO("subset of " << subsets[k].size() << " rows");
      const dev::StudyReference part = dev::study_outputs(w, subsets[k], recipes[r]);
      const dev::StudyReference part_reference = dev::study_outputs(w, subsets[k], recipes[0]);
      CHECK(e.grad_weight[k] ==
            Approx(relative_l2(part.grad_weight, part_reference.grad_weight)).epsilon(1e-9));
    }
    REQUIRE(e.grad_bias.has_value());
    CHECK(*e.grad_bias == Approx(relative_l2(out.grad_bias, reference.grad_bias)).epsilon(1e-9));
    CHECK(e.teacher_logit_relative > 0.0);
    CHECK(std::isfinite(e.soft_gradient_relative));
  }
  CHECK_THROWS_AS(dev::run_teacher_error_study(w, rows, {recipes[1]}), std::invalid_argument);
  CHECK_THROWS_AS(dev::sample_rows(w.tokens, 0), std::invalid_argument);
}

TEST_CASE("FP8 teacher: the error of each scaling recipe at the seed, on the CPU", "[.][fp8-teacher-error]") {
  const Workload w = load_workload(default_workloads_dir() / "seed-distill-jsd-h4096-t8192-v128256.json");
  const std::vector<std::int64_t> rows = dev::sample_rows(w.tokens, kSeedSampleRows);
  std::fprintf(stderr, "%lld sampled token rows of %s on %u threads\n", static_cast<long long>(rows.size()),
               w.name.c_str(), worker_count());
  const dev::StudyResult result =
      dev::run_teacher_error_study(w, rows, dev::standard_recipes(), [](const std::string &line) {
        std::fprintf(stderr, "  %s\n", line.c_str());
      });
  fmt::print("FP8 teacher error study: {} (T={} V={} H={} Hs={}, beta={} tau={})\n", w.name, w.tokens,
             w.vocab, w.hidden, w.student_hidden, w.scalars.beta, w.scalars.temperature);
  fmt::print("{} sampled token rows (row k at floor((2k+1) T / {})), {} valid; {:.0f} s on {} threads\n",
             rows.size(), 2 * rows.size(), result.valid_rows, result.seconds, worker_count());
  fmt::print("policy: {}, max relative error {}\n\n", w.correctness.comparator,
             w.correctness.max_relative_error);
  fmt::print("relative error against the bf16 teacher (fp64 throughout); grad W_s over the first {} / {} / "
             "{} rows\n",
             result.recipes[0].subset_rows[0], result.recipes[0].subset_rows[1],
             result.recipes[0].subset_rows[2]);
  fmt::print("{:<42} {:>9} {:>9}  {:<29} {}\n", "recipe", "loss", "grad x_s", "grad W_s", "grad b_s");
  fmt::print("{:<42} {:>9.6f}\n", "bf16 teacher: loss", result.recipes[0].loss);
  for (std::size_t r = 1; r < result.recipes.size(); ++r) fmt::print("{}\n", errors_line(result.recipes[r]));
  fmt::print("\nwhere it comes from\n{:<42} {:>11} {:>10} {:>11} {:>11} {:>13}\n", "recipe", "z_t rel L2",
             "z_t rms", "p rel L2", "G rel L2", "G_soft rel L2");
  for (std::size_t r = 1; r < result.recipes.size(); ++r) {
    const dev::RecipeError &e = result.recipes[r];
    fmt::print("{:<42} {:>11.2e} {:>10.2e} {:>11.2e} {:>11.2e} {:>13.2e}\n", e.name, e.teacher_logit_relative,
               e.teacher_logit_rms, e.teacher_probability_relative, e.logit_gradient_relative,
               e.soft_gradient_relative);
  }
  std::fflush(stdout);
  for (const dev::RecipeError &e : result.recipes) {
    INFO(e.name);
    CHECK(std::isfinite(e.loss));
    CHECK(std::isfinite(e.grad_input));
  }
}
