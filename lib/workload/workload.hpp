// A runnable workload: a KernelIndex WorkloadCase whose operation is one of
// Liger's JSD family (distill_jsd_loss, jsd, fused_linear_jsd), read and
// validated into typed fields. The file format is documented in
// docs/workloads.md, the three operations' math in docs/loss-math.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"
#include "lib/operations/operation.hpp"

namespace kibench {



// How one input tensor is filled (lib/inputs/generate.hpp gives the exact
// Philox4x32-10 stream layout that CPU and GPU both follow).
struct GeneratorSpec {
  // "philox4x32_10_uniform" (floats), "philox4x32_10_uniform_log_softmax" (jsd's
  // log-probabilities: each row of uniforms through log_softmax) or
  // "philox4x32_10_uniform_int" (targets)
  std::string name;
  std::uint64_t seed = 0; // Philox key
  double low = 0.0;       // uniform: [low, high); uniform_int: [low, high)
  double high = 1.0;
  double ignore_fraction = 0.0; // uniform_int only: P(target = ignore_index)
};

// jsd states beta and ignore_index; fused_linear_jsd also temperature (its
// weights are fixed: w_h = 0, w_s = 1); distill_jsd_loss all five.
struct LossScalars {
  double beta = 0.5;        // JSD mixture weight, in [0, 1]
  double temperature = 1.0; // tau, != 0
  double weight_hard = 0.5; // w_h on the cross-entropy
  double weight_soft = 0.5; // w_s on the JSD
  std::int64_t ignore_index = -100;
};

// The WorkloadCase's spec.correctness (so it is part of the comparison key).
// Two comparators; both compare every output (loss, grad x_s, grad W_s,
// grad b_s, or jsd's grad of its input) with the fp64 oracle, and both fail
// an output with a NaN or Inf anywhere (nanPolicy/infinityPolicy "reject"):
//   "fp64_oracle_rel_l2": every output o passes when
//     ||o - ref||_2 <= max_relative_error * ||ref||_2, or, where the
//     reference is exactly zero (all targets ignored), when
//     max|o - ref| <= max_absolute_error;
//   "fp64_oracle_loss_rel_abs_grads_rel_l2" (kibench's workloads): the
//     gradients as above; the loss, a scalar every shipped implementation
//     gets to within 0.4 of this bound (docs/protocol.md), passes when
//     |loss - ref| <= max(kLossRelativeTolerance * |ref|, kLossAbsoluteFloor).
//     The two numbers are part of the comparator's definition: other values
//     would be another comparator name, hence another policy digest.
inline constexpr std::string_view kComparatorRelL2 = "fp64_oracle_rel_l2";
inline constexpr std::string_view kComparatorLossRelAbs = "fp64_oracle_loss_rel_abs_grads_rel_l2";
inline constexpr double kLossRelativeTolerance = 1e-4;
[[nodiscard]] inline bool known_comparator(std::string_view comparator) {
  return comparator == kComparatorRelL2 || comparator == kComparatorLossRelAbs;
}
inline constexpr double kLossAbsoluteFloor = 1e-5;

struct CorrectnessPolicy {
  std::string comparator = std::string(kComparatorLossRelAbs);
  double max_relative_error = 0.0;
  double max_absolute_error = 0.0;
  std::string nan_policy = "reject";
  std::string infinity_policy = "reject";

  // Whether `output` is judged by the loss's own rule rather than rel L2.
  [[nodiscard]] bool loss_rule_for(std::string_view output) const {
    return comparator == kComparatorLossRelAbs && output == "loss";
  }
  // The loss's allowed |loss - ref| under that rule.
  [[nodiscard]] static double loss_allowance(double reference) {
    return std::max(kLossRelativeTolerance * std::abs(reference), kLossAbsoluteFloor);
  }
  // One line for the BenchmarkProtocol: how each output is judged ("" for
  // fp64_oracle_rel_l2, whose protocols predate the line and keep their
  // digests).
  [[nodiscard]] std::string describe_rule() const;
};

struct Workload {
  std::filesystem::path source; // the file it came from
  std::string name;             // metadata.name
  json::Value manifest;         // the WorkloadCase exactly as read
  json::Value operation;        // its OperationSpec (found by digest)
  // Which operation (lib/operations/), told by the OperationSpec's
  // signature: its axes and input tensors. Default: distill_jsd_loss.
  OperationKind operation_kind;

  std::int64_t tokens = 0;         // T
  std::int64_t vocab = 0;          // V
  std::int64_t hidden = 0;         // H (teacher); 0 for jsd
  std::int64_t student_hidden = 0; // Hs = hidden // 2 for distill_jsd_loss, = hidden for
                                   // fused_linear_jsd; 0 for jsd
  FloatType dtype = FloatType::bf16; // of the float inputs: bf16, or fp32 for jsd

  // The LM-head operations' inputs (unused for jsd).
  GeneratorSpec student_input, student_weight, teacher_input, teacher_weight;
  // jsd's inputs, [T, V] log-probabilities (unused otherwise): the student's
  // (Liger's `input`, log q) and the teacher's (Liger's `target`, log p).
  GeneratorSpec student_log_probs, teacher_log_probs;
  // The labels: required for distill_jsd_loss; optional for jsd and
  // fused_linear_jsd (Liger's shift_labels), where a workload without them
  // has has_target = false and `target` generates no ignored token, which is
  // the same loss (every token counts).
  GeneratorSpec target;
  bool has_target = true;
  std::optional<GeneratorSpec> student_bias, teacher_bias; // distill_jsd_loss only

  LossScalars scalars;
  CorrectnessPolicy correctness;

  // The operation's cost models (lib/operations/<operation>/): bytes of the
  // inputs in their stored dtypes; FLOPs of its GEMMs (0 where it has
  // none); the bytes a pass must move where no GEMM bounds it (0 where one
  // does).
  [[nodiscard]] std::uint64_t input_bytes() const { return operation_kind->input_bytes(*this); }
  [[nodiscard]] double gemm_flops(bool with_backward) const {
    return operation_kind->gemm_flops(*this, with_backward);
  }
  [[nodiscard]] double minimum_bytes(bool reads_inputs, bool writes_gradient) const {
    return operation_kind->minimum_bytes(*this, reads_inputs, writes_gradient);
  }
};

// Reads and validates a workload file. The OperationSpec is looked up by
// its digest among the JSON files in `operations_dir` (default: the
// `operations/` folder beside the workload, then workloads/operations).
// Throws InputError("<file>: <json path>: <problem>").
Workload load_workload(const std::filesystem::path &file);

// Validates an already-parsed WorkloadCase (used by the fuzz target too).
Workload workload_from_json(const json::Value &manifest, const json::Value &operation,
                            const std::filesystem::path &source);

// Every *.json under dir (not operations/), sorted by path.
std::vector<std::filesystem::path> list_workload_files(const std::filesystem::path &dir);

// The workloads folder: $KIBENCH_WORKLOADS, else ./workloads, else
// kibench's data folder's (lib/io/data_dir.hpp: share/kibench beside the
// binary, or in <prefix>/share/kibench when installed).
std::filesystem::path default_workloads_dir();

} // namespace kibench
