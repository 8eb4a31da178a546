#include "lib/workload/operation_signature.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/workload/field_reader.hpp"

namespace kibench::detail {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// The only derived-axis form KernelIndex's operations use: "<axis> // <k>",
// k a positive integer literal.
std::optional<std::pair<std::string, std::int64_t>> parse_floor_division(std::string_view expression) {
  const auto op = expression.find("//");
  if (op == std::string_view::npos) return std::nullopt;
  const std::string_view axis = trim(expression.substr(0, op));
  const std::string_view literal = trim(expression.substr(op + 2));
  std::int64_t divisor = 0;
  const auto [end, error] = std::from_chars(literal.data(), literal.data() + literal.size(), divisor);
  if (!is_identifier(axis) || error != std::errc() || end != literal.data() + literal.size() || divisor < 1) {
    return std::nullopt;
  }
  return std::pair{std::string(axis), divisor};
}

// Member lookup that fails with the operation's label and JSON path.
Field child(const Field &parent, std::string_view key) {
  if (!parent.value().is_object())
    parent.fail(fmt::format("expected an object, got {}", parent.value().type_name()));
  const json::Value *value = parent.value().find(key);
  if (value == nullptr) parent.fail(fmt::format("missing required field \"{}\"", key));
  return Field(*value, member_path(parent.path(), key), parent.source());
}

} // namespace

OperationSignature OperationSignature::read(const json::Value &operation, const std::string &label) {
  OperationSignature signature;
  const Field root(operation, "$", label);
  const Field spec = child(root, "spec");
  if (const json::Value *name =
          operation.find("metadata") ? operation.find("metadata")->find("name") : nullptr;
      name != nullptr && name->is_string()) {
    signature.name_ = name->as_string();
  }

  const Field axes = child(spec, "axes");
  if (!axes.value().is_object()) axes.fail("expected an object");
  for (const auto &[axis_name, rule_value] : axes.value().as_object()) {
    const Field rule(rule_value, member_path(axes.path(), axis_name), label);
    if (!is_identifier(axis_name)) rule.fail("axis name is not an identifier");
    AxisRule axis{axis_name, std::nullopt, 1};
    const std::string &role = child(rule, "role").string();
    if (role == "derived") {
      const Field expression = child(rule, "expression");
      const auto parsed = parse_floor_division(expression.string());
      if (!parsed)
        expression.fail(fmt::format("unsupported expression {:?} (kibench evaluates \"axis // k\")",
                                    expression.string()));
      axis.source_axis = parsed->first;
      axis.divisor = parsed->second;
    } else if (role != "variable") {
      rule.fail(fmt::format("unsupported axis role {:?}", role));
    }
    signature.axes_.push_back(std::move(axis));
  }
  // A derived axis must come from a variable one (no chains, no cycles).
  for (const AxisRule &axis : signature.axes_) {
    if (!axis.source_axis) continue;
    const AxisRule *source = signature.find_axis(*axis.source_axis);
    if (source == nullptr || source->source_axis) {
      root.fail(fmt::format("derived axis \"{}\" refers to \"{}\", which is not a variable axis", axis.name,
                            *axis.source_axis));
    }
  }

  const Field inputs = child(spec, "inputs");
  for (std::size_t i = 0; i < inputs.array().size(); ++i) {
    const Field input = inputs.element(i);
    InputSignature signature_input;
    signature_input.name = child(input, "name").string();
    const Field tensor = child(input, "tensor");
    signature_input.dtype = child(tensor, "dtype").string();
    const Field shape = child(tensor, "shape");
    for (std::size_t d = 0; d < shape.array().size(); ++d) {
      const Field dim = shape.element(d);
      if (dim.value().is_string()) {
        if (signature.find_axis(dim.string()) == nullptr)
          dim.fail(fmt::format("unknown axis {:?}", dim.string()));
        signature_input.shape.emplace_back(dim.string());
      } else {
        signature_input.shape.emplace_back(dim.integer(0, std::int64_t{1} << 53));
      }
    }
    signature.inputs_.push_back(std::move(signature_input));
  }
  return signature;
}

const AxisRule *OperationSignature::find_axis(std::string_view name) const {
  const auto it = std::find_if(axes_.begin(), axes_.end(), [&](const AxisRule &a) { return a.name == name; });
  return it == axes_.end() ? nullptr : &*it;
}

const InputSignature *OperationSignature::find_input(std::string_view name) const {
  const auto it =
      std::find_if(inputs_.begin(), inputs_.end(), [&](const InputSignature &s) { return s.name == name; });
  return it == inputs_.end() ? nullptr : &*it;
}

std::map<std::string, std::int64_t>
OperationSignature::bind_axes(const std::map<std::string, std::int64_t> &variable) const {
  std::map<std::string, std::int64_t> bound = variable;
  for (const AxisRule &axis : axes_) {
    if (axis.source_axis) bound[axis.name] = variable.at(*axis.source_axis) / axis.divisor;
  }
  return bound;
}

std::string to_string(const std::vector<Dimension> &shape) {
  std::vector<std::string> parts;
  for (const Dimension &dim : shape) {
    parts.push_back(std::holds_alternative<std::string>(dim)
                        ? std::get<std::string>(dim)
                        : fmt::format("{}", std::get<std::int64_t>(dim)));
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

} // namespace kibench::detail
