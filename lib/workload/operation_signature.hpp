// The parts of a KernelIndex OperationSpec that bind a WorkloadCase: its
// axes (variable, or derived as "axis // k") and the symbolic shapes and
// dtypes of its input tensors. A workload's shapes are checked against
// these, so the operation file (not kibench's code) says what
// "student_hidden" or the shape of "teacher_weight" is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::detail {

struct AxisRule {
  std::string name;
  // Derived axes: value = source axis // divisor (floor division of
  // positive integers). Variable axes have no source.
  std::optional<std::string> source_axis;
  std::int64_t divisor = 1;
};

// One dimension of a symbolic shape: an axis name or a literal extent.
using Dimension = std::variant<std::string, std::int64_t>;

struct InputSignature {
  std::string name;
  std::vector<Dimension> shape;
  std::string dtype; // "float" (any float type) or a concrete one ("int64")
};

class OperationSignature {
public:
  // Reads spec.axes and spec.inputs; `label` names the operation in errors.
  // Throws InputError for an OperationSpec kibench cannot interpret.
  static OperationSignature read(const json::Value &operation, const std::string &label);

  [[nodiscard]] const std::string &name() const { return name_; }
  [[nodiscard]] const std::vector<AxisRule> &axes() const { return axes_; }
  [[nodiscard]] const std::vector<InputSignature> &inputs() const { return inputs_; }
  [[nodiscard]] const AxisRule *find_axis(std::string_view name) const;
  [[nodiscard]] const InputSignature *find_input(std::string_view name) const;

  // Values of every axis (derived ones computed) from the variable ones.
  [[nodiscard]] std::map<std::string, std::int64_t>
  bind_axes(const std::map<std::string, std::int64_t> &variable) const;

private:
  std::string name_;
  std::vector<AxisRule> axes_;
  std::vector<InputSignature> inputs_;
};

// "[tokens, student_hidden]"
std::string to_string(const std::vector<Dimension> &shape);

} // namespace kibench::detail
