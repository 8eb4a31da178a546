// The fp64 oracle of jsd (docs/loss-math.md, "jsd"): Liger's generalized
// JSD between a student's and a teacher's log-probabilities and its
// gradient with respect to the student's, in double, term by term.
//
//   X = log q (student, Liger's `input`),  Y = log p (teacher, `target`)   [T, V]
//   0 < beta < 1:  log m = logaddexp(Y + log beta, X + log(1 - beta))
//                  J_i = sum_k beta p (Y - log m) + (1 - beta) q (X - log m)
//                  dJ_i/dX_k = (1 - beta) q_k (X_k - log m_k)
//   beta = 0:      J_i = sum_k p (Y - X)          dJ_i/dX_k = -p_k
//   beta = 1:      J_i = sum_k q (X - Y)          dJ_i/dX_k = q_k (X_k - Y_k + 1)
//   loss = sum_valid J_i / N,  grad[i] = dJ_i/dX / N (0 for ignored rows),
//   N = max(1, #valid).
// X and Y are free variables here: the gradient is the partial derivative
// of the loss as Liger's kernel writes it, not projected onto normalized
// rows (no softmax lies between X and the loss).
#pragma once

#include <cstdint>
#include <vector>

#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

struct JsdProblem {
  std::int64_t tokens = 0;               // T
  std::int64_t vocab = 0;                // V
  std::vector<double> student_log_probs; // X [T, V]
  std::vector<double> teacher_log_probs; // Y [T, V]
  std::vector<std::int64_t> target;      // [T]: rows labelled ignore_index are left out
  double beta = 0.5;
  std::int64_t ignore_index = -100;
};

struct JsdResult {
  double loss = 0.0;
  std::vector<double> gradient; // dloss/dX [T, V]; empty when not asked for
};

// The workload's fp32 log-probabilities widened (exactly) to double.
[[nodiscard]] JsdProblem jsd_problem(const Workload &workload, const HostInputs &inputs);

// Throws std::invalid_argument for inconsistent shapes or beta outside [0, 1].
void validate(const JsdProblem &problem);

[[nodiscard]] JsdResult run_jsd_oracle(const JsdProblem &problem, bool with_gradient = true);

} // namespace kibench
