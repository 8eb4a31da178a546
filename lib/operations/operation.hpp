// An operation kibench runs, as one object: everything about it that is not
// an implementation. The workload reader, the input generators, the cost
// models, the run table, the tensor dump, the plugin ABI and --axis ask it
// instead of switching on the operation. Each operation is one folder under
// lib/operations/ (its OperationSpec facts, its scalars and tensors, its
// FLOP and byte models) registered once in lib/operations/registry.cpp;
// docs/architecture.md, "How to add an operation", lists the steps.
//
// Layering: this header names Workload only by declaration; the operations'
// sources read Workload's fields (lib/workload/workload.hpp), and the
// workload reader finds an operation through the registry.
#pragma once

#include <cstdint>
#include <compare>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench {

struct Workload;
struct LossScalars;

enum class FloatType { bf16, fp32 };

// One input of the OperationSpec, in order: name, symbolic shape and dtype
// class ("float" or "int64"), as KernelIndex's OperationSpec states them.
struct OperationInput {
  std::string_view name;
  std::string_view shape;
  std::string_view dtype;
};

// A tensor a WorkloadCase may give beyond the OperationSpec's inputs (the
// LM-head biases, Liger's optional labels): one-dimensional, along `axis`.
struct OptionalTensor {
  std::string_view name;
  std::string_view axis; // "vocab" or "tokens"
  bool is_float = true;  // else int64
};

class Operation {
public:
  virtual ~Operation() = default;

  // --- identity -----------------------------------------------------------
  // Its OperationSpec's name ("jsd"), as the plugin ABI, the Python lanes
  // and the run table spell it.
  [[nodiscard]] virtual std::string_view name() const = 0;
  // The digest of its curated OperationSpec (workloads/operations/<name>.json).
  [[nodiscard]] virtual std::string_view digest() const = 0;
  // KIBENCH_OPERATION_* of include/kibench/kibench_plugin.h.
  [[nodiscard]] virtual std::int32_t abi_code() const = 0;

  // --- the OperationSpec signature a workload binds to -----------------------
  [[nodiscard]] virtual std::span<const OperationInput> inputs() const = 0;
  [[nodiscard]] virtual std::span<const std::string_view> variable_axes() const = 0;
  // Whether student_hidden = hidden // k is a derived axis (k is free: the
  // kernels take Hs as a parameter; KernelIndex's curated spec has k = 2).
  [[nodiscard]] virtual bool derives_student_hidden() const { return false; }
  [[nodiscard]] virtual std::span<const OptionalTensor> optional_tensors() const = 0;

  // --- how a workload states its inputs and scalars ---------------------------
  // The dtype of its float inputs, and their generator.
  [[nodiscard]] virtual FloatType float_type() const = 0;
  [[nodiscard]] virtual std::string_view float_generator() const = 0;
  // Why that dtype (appended to the reader's dtype error), or "".
  [[nodiscard]] virtual std::string_view float_type_reason() const { return ""; }
  // The scalars a workload states, in docs/workloads.md's order.
  [[nodiscard]] virtual std::span<const std::string_view> scalar_names() const = 0;
  // The values of the scalars it does not state (its fixed loss weights).
  virtual void fix_scalars(LossScalars & /*scalars*/) const {}
  // hidden and student_hidden from the bound axes (0 where it has none).
  virtual void bind_axes(Workload &workload, const std::map<std::string, std::int64_t> &axes) const = 0;

  // --- cost models (docs/perf.md) -------------------------------------------
  // Bytes of the inputs in their stored dtypes.
  [[nodiscard]] virtual std::uint64_t input_bytes(const Workload &w) const = 0;
  // FLOPs of its GEMMs (0 for an operation without).
  [[nodiscard]] virtual double gemm_flops(const Workload &w, bool with_backward) const = 0;
  // The bytes a pass must move where no GEMM bounds it (0 where one does).
  [[nodiscard]] virtual double minimum_bytes(const Workload &w, bool reads_inputs, bool writes_gradient) const = 0;

  // --- its outputs ----------------------------------------------------------
  // Shape of grad_student_input, the gradient of its first input.
  [[nodiscard]] virtual std::vector<std::int64_t> grad_student_input_shape(const Workload &w) const = 0;
  // Whether it has LM-head weights, hence grad_student_weight (and
  // grad_student_bias where the workload has the bias).
  [[nodiscard]] virtual bool has_lm_heads() const = 0;

  // --- presentation and derivation ------------------------------------------
  // The run table's line under the workload's name: the shape and the work.
  [[nodiscard]] virtual std::string describe_shape(const Workload &w) const = 0;
  // Appended to the title and description of the revision of code written
  // for another operation that also computes this one ("" if none does).
  [[nodiscard]] virtual std::string_view shared_code_title() const { return ""; }
  [[nodiscard]] virtual std::string_view shared_code_description() const { return ""; }
  // The WorkloadCase of `base` at `axes` (--axis). Default: from the
  // OperationSpec's signature (lib/workload/axis_sweep.hpp,
  // derive_case_from_signature).
  [[nodiscard]] virtual json::Value derive_case(const Workload &base,
                                                const std::map<std::string, std::int64_t> &axes) const;
};

// A registered operation, cheap to copy and compare: the handle
// implementations, workloads and maps keep. Default: the first registered
// operation (distill_jsd_loss, the seed's).
class OperationKind {
public:
  OperationKind();
  explicit OperationKind(const Operation &operation) : operation_(&operation) {}

  [[nodiscard]] const Operation &operation() const { return *operation_; }
  const Operation *operator->() const { return operation_; }
  [[nodiscard]] std::string_view name() const { return operation_->name(); }

  friend bool operator==(OperationKind a, OperationKind b) { return a.operation_ == b.operation_; }
  // Registration order.
  friend std::strong_ordering operator<=>(OperationKind a, OperationKind b) { return a.rank() <=> b.rank(); }

private:
  [[nodiscard]] std::size_t rank() const;
  const Operation *operation_;
};

[[nodiscard]] inline std::string_view to_string(OperationKind kind) { return kind.name(); }

} // namespace kibench
