// A runnable workload: a KernelIndex WorkloadCase whose operation is one of
// Liger's JSD family (distill_jsd_loss, jsd, fused_linear_jsd), read and
// validated into typed fields. The file format is documented in
// docs/workloads.md, the three operations' math in docs/loss-math.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench {

enum class FloatType { bf16, fp32 };

// The operations kibench runs, told apart by their OperationSpec's
// signature (its axes and input tensors):
//   distill_jsd_loss  two LM heads, hard cross-entropy + soft JSD
//   jsd               JSD between two [tokens, vocab] log-probability tensors
//   fused_linear_jsd  two LM heads + JSD, no hard loss (distill_jsd_loss with
//                     w_h = 0, w_s = 1 and the student as wide as the teacher)
enum class OperationKind { distill_jsd_loss, jsd, fused_linear_jsd };
std::string_view to_string(OperationKind kind);

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
// comparator "fp64_oracle_rel_l2": every output o (loss, grad x_s, grad W_s,
// grad b_s) is compared with the fp64 oracle; it passes when
// ||o - ref||_2 <= max_relative_error * ||ref||_2, or, where the reference is
// exactly zero (all targets ignored), when max|o - ref| <= max_absolute_error.
// NaN or Inf anywhere fails (nanPolicy/infinityPolicy "reject").
struct CorrectnessPolicy {
  std::string comparator = "fp64_oracle_rel_l2";
  double max_relative_error = 0.0;
  double max_absolute_error = 0.0;
  std::string nan_policy = "reject";
  std::string infinity_policy = "reject";
};

struct Workload {
  std::filesystem::path source; // the file it came from
  std::string name;             // metadata.name
  json::Value manifest;         // the WorkloadCase exactly as read
  json::Value operation;        // its OperationSpec (found by digest)
  OperationKind operation_kind = OperationKind::distill_jsd_loss;

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

  // Bytes of the inputs (and biases) in their stored dtypes.
  [[nodiscard]] std::uint64_t input_bytes() const;
  // 2*T*V*Hs (z_s) + 2*T*V*H (z_t) [+ 2*2*T*V*Hs for the backward GEMMs];
  // 0 for jsd, which has no GEMM.
  [[nodiscard]] double gemm_flops(bool with_backward) const;
  // The bytes a pass must move at least where no GEMM bounds it (jsd: the
  // fp32 [T, V] log-probabilities X and Y read, 8·T·V, where the pass
  // reads them; grad X written, 4·T·V, where it writes it: a forward pass
  // reads, a backward writes, a full pass does both); 0 otherwise.
  [[nodiscard]] double minimum_bytes(bool reads_inputs, bool writes_gradient) const;
  [[nodiscard]] bool is_jsd() const { return operation_kind == OperationKind::jsd; }
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
