// The fp64 oracle on the CPU: the distillation loss and its gradients with
// respect to the student, computed in double exactly as docs/loss-math.md
// writes them. It is the definition every implementation is checked
// against, and it is small enough to read: no fusion, no tiling.
//
//   z_s = x_s W_s^T (+ b_s),  z_t = x_t W_t^T (+ b_t)            [T, V]
//   q = softmax(z_s / tau),   p = softmax(z_t / tau)
//   loss = w_h * sum_valid CE_i / N + w_s * sum_valid J_i / N,  N = max(1, #valid)
//   G[i] = (1/N) (w_h (softmax(z_s,i) - onehot(y_i)) + w_s dJ_i/dz_s,i)
//   grad x_s = G W_s,  grad W_s = G^T x_s,  grad b_s = sum_i G[i]
//
// Work is spread over the cores by token rows (forward, G, grad x_s) and by
// vocabulary rows (grad W_s, grad b_s); every output element is a sum in a
// fixed order, so the result does not depend on the number of threads.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/inputs/input_set.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// Inputs in double, row-major, so tests can perturb any element.
struct OracleProblem {
  std::int64_t tokens = 0;            // T
  std::int64_t vocab = 0;             // V
  std::int64_t hidden = 0;            // H
  std::int64_t student_hidden = 0;    // Hs
  std::vector<double> student_input;  // [T, Hs]
  std::vector<double> student_weight; // [V, Hs]
  std::vector<double> teacher_input;  // [T, H]
  std::vector<double> teacher_weight; // [V, H]
  std::vector<std::int64_t> target;   // [T]
  std::vector<double> student_bias;   // [V] or empty
  std::vector<double> teacher_bias;   // [V] or empty
  LossScalars scalars;
};

// The workload's bf16 inputs widened (exactly) to double.
[[nodiscard]] OracleProblem oracle_problem(const Workload &workload, const HostInputs &inputs);

// Both logit matrices, kept between the forward and the backward.
struct OracleLogits {
  std::vector<double> student; // z_s [T, V]
  std::vector<double> teacher; // z_t [T, V]
};

struct OracleGradients {
  std::vector<double> student_input;  // [T, Hs]
  std::vector<double> student_weight; // [V, Hs]
  std::vector<double> student_bias;   // [V], empty when the problem has no student bias
};

struct OracleResult {
  double loss = 0.0;
  OracleGradients gradients; // empty vectors when not asked for
};

// Throws std::invalid_argument for inconsistent shapes, tau == 0, beta
// outside [0, 1] or a target outside [0, V) that is not ignore_index.
void validate(const OracleProblem &problem);

[[nodiscard]] OracleLogits oracle_logits(const OracleProblem &problem);
[[nodiscard]] double oracle_loss(const OracleProblem &problem, const OracleLogits &logits);
// G [T, V]: the gradient of the loss w.r.t. the student logits (zero rows
// for ignored tokens).
[[nodiscard]] std::vector<double> oracle_logit_gradient(const OracleProblem &problem,
                                                        const OracleLogits &logits);
// grad x_s = G W_s, grad W_s = G^T x_s, grad b_s = sum_i G[i].
[[nodiscard]] OracleGradients oracle_gradients(const OracleProblem &problem, const OracleLogits &logits);

// validate + logits + loss (+ gradients).
[[nodiscard]] OracleResult run_oracle(const OracleProblem &problem, bool with_gradients = true);

} // namespace kibench
