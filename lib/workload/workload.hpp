// A runnable distillation-loss workload: a KernelIndex WorkloadCase whose
// operation is the distill_jsd_loss OperationSpec, read and validated into
// typed fields. The file format is documented in docs/workloads.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench {

enum class FloatType { bf16, fp32 };

// How one input tensor is filled (lib/inputs/generate.hpp gives the exact
// Philox4x32-10 stream layout that CPU and GPU both follow).
struct GeneratorSpec {
  std::string name;       // "philox4x32_10_uniform" (floats) or "philox4x32_10_uniform_int" (targets)
  std::uint64_t seed = 0; // Philox key
  double low = 0.0;       // uniform: [low, high); uniform_int: [low, high)
  double high = 1.0;
  double ignore_fraction = 0.0; // uniform_int only: P(target = ignore_index)
};

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

  std::int64_t tokens = 0;         // T
  std::int64_t vocab = 0;          // V
  std::int64_t hidden = 0;         // H (teacher)
  std::int64_t student_hidden = 0; // Hs = hidden // 2 for distill_jsd_loss
  FloatType dtype = FloatType::bf16;

  GeneratorSpec student_input, student_weight, teacher_input, teacher_weight, target;
  std::optional<GeneratorSpec> student_bias, teacher_bias;

  LossScalars scalars;
  CorrectnessPolicy correctness;

  // Bytes of the five inputs (and biases) in their stored dtypes.
  [[nodiscard]] std::uint64_t input_bytes() const;
  // 2*T*V*Hs (z_s) + 2*T*V*H (z_t) [+ 2*2*T*V*Hs for the backward GEMMs].
  [[nodiscard]] double gemm_flops(bool with_backward) const;
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

// The workloads folder: $KIBENCH_WORKLOADS, else ./workloads, else the
// source tree's.
std::filesystem::path default_workloads_dir();

} // namespace kibench
