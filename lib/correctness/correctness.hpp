// The correctness gate: one implementation's outputs against the fp64
// oracle's, under the workload's CorrectnessPolicy (see workload.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/implementation/implementation.hpp"
#include "lib/workload/workload.hpp"

namespace kibench {

// Error of one output tensor against its reference.
struct ErrorStats {
  std::string output;         // "loss", "grad_student_input", ...
  std::int64_t count = 0;     // elements compared
  double max_abs_error = 0.0; // max |out - ref|
  double rel_l2_error = 0.0;  // ||out - ref||_2 / ||ref||_2 (inf if ref is 0 and out is not)
  double ref_l2_norm = 0.0;   // ||ref||_2
  std::int64_t nonfinite = 0; // NaN or Inf elements in out (poison left behind counts here)
  bool passed = false;
};

struct CorrectnessVerdict {
  std::vector<ErrorStats> outputs;
  bool passed = false;
  std::string summary; // one line: the worst output and why it failed, if it did
};

// Fills `passed` of one ErrorStats from the policy.
void apply_policy(ErrorStats &stats, const CorrectnessPolicy &policy);

// Accumulates errors of host tensors (any ElementType) element by element.
ErrorStats compare_host(std::string output, const TensorRef &out, const TensorRef &ref);
ErrorStats compare_scalar(std::string output, double out, double ref);

CorrectnessVerdict make_verdict(std::vector<ErrorStats> outputs, const CorrectnessPolicy &policy);

// Whether the check of `pass` compares the student gradients: every pass
// but forward (a backward-pass check runs the full pass, loss included).
bool checks_gradients(Pass pass);

} // namespace kibench
