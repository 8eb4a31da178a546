#include "lib/workload/axis_sweep.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <variant>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/json/path.hpp"
#include "lib/workload/operation_signature.hpp"

namespace kibench {

namespace {

constexpr std::int64_t kMaxAxisValue = 2147483647; // as a workload file's axes

// The member `key` of a validated manifest's object; its absence is a bug.
json::Value &member(json::Value &object, std::string_view key) {
  json::Value *found = object.is_object() ? object.as_object().find(key) : nullptr;
  if (found == nullptr) throw std::logic_error(fmt::format("derive_workload_case: no member \"{}\"", key));
  return *found;
}

std::int64_t whole_number(std::string_view axis, std::string_view text) {
  std::int64_t value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits || error != std::errc{} || stop != end || value < 1 || value > kMaxAxisValue)
    throw InputError(
        fmt::format("--axis: {}: {:?} is not a whole number in [1, {}]", axis, text, kMaxAxisValue));
  return value;
}

void add_value(AxisValues &axis, std::int64_t value) {
  if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) return;
  if (axis.values.size() == kMaxAxisValues)
    throw InputError(fmt::format("--axis: {}: more than {} values", axis.name, kMaxAxisValues));
  axis.values.push_back(value);
}

// "START:STOP:STEP", "START:STOP:pow2" or "START:STOP" (step 1).
void add_range(AxisValues &axis, std::string_view item) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    const std::size_t colon = item.find(':', at);
    parts.push_back(item.substr(at, colon == std::string_view::npos ? std::string_view::npos : colon - at));
    if (colon == std::string_view::npos) break;
    at = colon + 1;
  }
  if (parts.size() > 3)
    throw InputError(
        fmt::format("--axis: {}: {:?} is not START:STOP:STEP or START:STOP:pow2", axis.name, item));
  const std::int64_t start = whole_number(axis.name, parts[0]);
  const std::int64_t stop = whole_number(axis.name, parts[1]);
  if (stop < start)
    throw InputError(
        fmt::format("--axis: {}: the range {:?} runs backwards ({} > {})", axis.name, item, start, stop));
  if (parts.size() == 3 && parts[2] == "pow2") {
    for (std::int64_t v = start; v <= stop; v *= 2) add_value(axis, v);
    return;
  }
  const std::int64_t step = parts.size() == 3 ? whole_number(axis.name, parts[2]) : 1;
  if ((stop - start) / step >= static_cast<std::int64_t>(kMaxAxisValues))
    throw InputError(
        fmt::format("--axis: {}: {:?} gives more than {} values", axis.name, item, kMaxAxisValues));
  for (std::int64_t v = start; v <= stop; v += step) add_value(axis, v);
}

std::string axes_text(const std::map<std::string, std::int64_t> &values,
                      const std::vector<AxisValues> &order) {
  std::vector<std::string> parts;
  for (const AxisValues &axis : order) parts.push_back(fmt::format("{}={}", axis.name, values.at(axis.name)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

AxisValues parse_axis(std::string_view text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos)
    throw InputError(fmt::format("--axis: {:?} is not NAME=VALUES (e.g. tokens=1024,2048 or "
                                 "tokens=1024:8192:pow2)",
                                 text));
  AxisValues axis;
  axis.name = std::string(text.substr(0, equals));
  if (axis.name == "student_hidden")
    throw InputError("--axis: student_hidden follows hidden (hidden // 2): sweep hidden");
  if (std::find(std::begin(kSweepAxes), std::end(kSweepAxes), axis.name) == std::end(kSweepAxes))
    throw InputError(fmt::format("--axis: unknown axis {:?} (the axes: {})", axis.name,
                                 fmt::join(std::begin(kSweepAxes), std::end(kSweepAxes), ", ")));
  std::string_view values = text.substr(equals + 1);
  if (values.size() >= 2 && values.front() == '[' && values.back() == ']')
    values = values.substr(1, values.size() - 2);
  if (values.empty()) throw InputError(fmt::format("--axis: {}: no values", axis.name));
  for (std::size_t at = 0;;) {
    const std::size_t comma = values.find(',', at);
    const std::string_view item =
        values.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (item.find(':') != std::string_view::npos) {
      add_range(axis, item);
    } else {
      add_value(axis, whole_number(axis.name, item));
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  for (const std::int64_t v : axis.values)
    if (axis.name == "hidden" && v < 2)
      throw InputError(fmt::format("--axis: hidden={} leaves the student no hidden units (student_hidden = "
                                   "hidden // 2 must be at least 1)",
                                   v));
  return axis;
}

std::vector<AxisValues> parse_axes(const std::vector<std::string> &arguments) {
  std::vector<AxisValues> axes;
  std::size_t cases = 1;
  for (const std::string &argument : arguments) {
    AxisValues axis = parse_axis(argument);
    for (const AxisValues &earlier : axes)
      if (earlier.name == axis.name)
        throw InputError(fmt::format(
            "--axis: {} given twice (one --axis per axis, its values comma-separated)", axis.name));
    cases *= axis.values.size();
    if (cases > kMaxSweepCases)
      throw InputError(fmt::format("--axis: the axes give more than {} workloads", kMaxSweepCases));
    axes.push_back(std::move(axis));
  }
  return axes;
}

json::Value derive_workload_case(const json::Value &base, const std::map<std::string, std::int64_t> &axes) {
  json::Value w = base;
  const std::string base_name = member(member(w, "metadata"), "name").as_string();
  json::Value &spec = member(w, "spec");
  std::map<std::string, std::int64_t> shape;
  for (const std::string_view name : kSweepAxes) {
    const auto given = axes.find(std::string(name));
    shape[std::string(name)] =
        given != axes.end() ? given->second : member(member(spec, "axes"), name).as_int();
  }
  const std::int64_t tokens = shape.at("tokens"), vocab = shape.at("vocab"), hidden = shape.at("hidden");
  const std::int64_t student = hidden / 2;
  member(spec, "axes") = json::Object{{"tokens", tokens}, {"vocab", vocab}, {"hidden", hidden}};

  json::Value &tensors = member(spec, "tensors");
  const auto set_shape = [&](std::string_view name, json::Array extents) {
    if (json::Value *tensor = tensors.as_object().find(name)) member(*tensor, "shape") = std::move(extents);
  };
  set_shape("student_input", {tokens, student});
  set_shape("teacher_input", {tokens, hidden});
  set_shape("student_weight", {vocab, student});
  set_shape("teacher_weight", {vocab, hidden});
  set_shape("target", {tokens});
  set_shape("student_bias", {vocab});
  set_shape("teacher_bias", {vocab});
  // nn.Linear's default init: uniform ±1/sqrt(fan_in), for the weight and
  // the bias of each head.
  for (const auto &[name, fan_in] :
       {std::pair{"student_weight", student}, std::pair{"teacher_weight", hidden},
        std::pair{"student_bias", student}, std::pair{"teacher_bias", hidden}}) {
    json::Value *tensor = tensors.as_object().find(name);
    if (tensor == nullptr) continue;
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    member(member(*tensor, "data"), "parameters") = json::Object{{"low", -bound}, {"high", bound}};
  }
  json::Value &target_range = member(member(member(tensors, "target"), "data"), "parameters");
  target_range.as_object().set("high", vocab);

  const std::string name =
      fmt::format("distill-jsd-loss-hidden{}-tokens{}-vocab{}-bf16", hidden, tokens, vocab);
  member(w, "metadata") = json::Object{
      {"name", name},
      {"title", fmt::format("distill_jsd_loss sweep: T={}, V={}, H={} (student {}), bf16", tokens, vocab,
                            hidden, student)},
      {"description",
       fmt::format("Scaling study: the generators, scalars and policy of {} at another shape.", base_name)},
  };
  return w;
}

// jsd, fused_linear_jsd and any operation but distill_jsd_loss (whose files
// workloads/sweeps/generate.py writes, derived above): every input's shape
// from its OperationSpec signature at the new axes, the LM heads' uniform
// bounds ±1/sqrt(fan_in) where they are nn.Linear's default init, a
// target's range [low, vocab), and the name generate_jsd_family.py's
// pattern gives: "<operation>-<axis><value>...-<dtype>", axes in
// alphabetical order.
json::Value derive_case_from_signature(const Workload &base, const std::map<std::string, std::int64_t> &given) {
  const detail::OperationSignature signature =
      detail::OperationSignature::read(base.operation, base.source.string());
  json::Value w = base.manifest;
  const std::string base_name = member(member(w, "metadata"), "name").as_string();
  json::Value &spec = member(w, "spec");
  std::map<std::string, std::int64_t> variable;
  for (const auto &[name, value] : member(spec, "axes").as_object()) {
    const auto found = given.find(name);
    variable[name] = found != given.end() ? found->second : value.as_int();
  }
  json::Object axes;
  for (const auto &[name, value] : member(spec, "axes").as_object()) axes.set(name, variable.at(name));
  member(spec, "axes") = std::move(axes);
  const std::map<std::string, std::int64_t> bound = signature.bind_axes(variable);

  std::string dtype;
  json::Object &tensors = member(spec, "tensors").as_object();
  std::vector<std::string> names;
  for (const auto &entry : tensors) names.push_back(entry.first);
  for (const std::string &name : names) {
    const detail::InputSignature *input = signature.find_input(name);
    if (input == nullptr) continue;
    json::Value &tensor = *tensors.find(name);
    json::Array extents;
    for (const detail::Dimension &dimension : input->shape)
      extents.emplace_back(std::holds_alternative<std::int64_t>(dimension)
                               ? std::get<std::int64_t>(dimension)
                               : bound.at(std::get<std::string>(dimension)));
    member(tensor, "shape") = std::move(extents);
    if (input->dtype == "float" && dtype.empty()) dtype = member(tensor, "dtype").as_string();
  }
  for (const char *head : {"student_weight", "teacher_weight"}) {
    json::Value *tensor = tensors.find(head);
    if (tensor == nullptr) continue;
    const json::Value *parameters = json::member_at(*tensor, "data.parameters");
    const json::Array &shape = member(*tensor, "shape").as_array();
    const json::Value *low = parameters != nullptr ? parameters->find("low") : nullptr;
    const json::Value *high = parameters != nullptr ? parameters->find("high") : nullptr;
    // Only the symmetric ±1/sqrt(fan_in) of nn.Linear follows the shape.
    if (low == nullptr || high == nullptr || !low->is_number() || !high->is_number() || shape.size() != 2 ||
        low->as_number() != -high->as_number() || high->as_number() <= 0)
      continue;
    const double bound_now = 1.0 / std::sqrt(static_cast<double>(shape[1].as_int()));
    member(member(*tensor, "data"), "parameters") = json::Object{{"low", -bound_now}, {"high", bound_now}};
  }
  if (json::Value *target = tensors.find("target"); target != nullptr && variable.contains("vocab")) {
    json::Value *data = target->is_object() ? target->as_object().find("data") : nullptr;
    json::Value *parameters =
        data != nullptr && data->is_object() ? data->as_object().find("parameters") : nullptr;
    if (parameters != nullptr && parameters->is_object() && parameters->as_object().contains("high"))
      parameters->as_object().set("high", variable.at("vocab"));
  }

  const std::string operation(to_string(base.operation_kind));
  std::string name = operation;
  std::replace(name.begin(), name.end(), '_', '-');
  for (const auto &[axis, value] : variable) name += fmt::format("-{}{}", axis, value); // std::map: sorted
  name += "-" + dtype;
  std::vector<std::string> shown;
  for (const auto &[axis, letter] :
       {std::pair{"tokens", "T"}, std::pair{"vocab", "V"}, std::pair{"hidden", "H"}})
    if (variable.contains(axis)) shown.push_back(fmt::format("{}={}", letter, variable.at(axis)));
  member(w, "metadata") = json::Object{
      {"name", name},
      {"title", fmt::format("{} sweep: {}, {}", operation, fmt::join(shown, ", "), dtype)},
      {"description",
       fmt::format("Scaling study: the generators, scalars and policy of {} at another shape.", base_name)},
  };
  return w;
}

json::Value derive_workload_case(const Workload &base, const std::map<std::string, std::int64_t> &axes) {
  return base.operation_kind->derive_case(base, axes);
}

std::vector<Workload> expand_sweep(const Workload &base, const std::vector<AxisValues> &axes) {
  if (axes.empty()) return {base};
  // An axis the operation does not have is the user's mistake, named with
  // the axes it has.
  const detail::OperationSignature signature =
      detail::OperationSignature::read(base.operation, base.source.string());
  std::vector<std::string> variable;
  for (const detail::AxisRule &rule : signature.axes())
    if (!rule.source_axis) variable.push_back(rule.name);
  for (const AxisValues &axis : axes)
    if (std::find(variable.begin(), variable.end(), axis.name) == variable.end())
      throw InputError(fmt::format("--axis: {}: {} ({}) has no axis {} (its axes: {})", axis.name,
                                   base.source.string(), to_string(base.operation_kind), axis.name,
                                   fmt::join(variable, ", ")));
  std::vector<Workload> out;
  std::vector<std::size_t> index(axes.size(), 0);
  while (true) {
    std::map<std::string, std::int64_t> values;
    for (std::size_t k = 0; k < axes.size(); ++k) values[axes[k].name] = axes[k].values[index[k]];
    const std::filesystem::path source =
        fmt::format("{} at {}", base.source.string(), axes_text(values, axes));
    out.push_back(workload_from_json(derive_workload_case(base, values), base.operation, source));
    // The last axis varies fastest.
    std::size_t k = axes.size();
    while (k > 0 && ++index[k - 1] == axes[k - 1].values.size()) index[--k] = 0;
    if (k == 0) break;
  }
  return out;
}

} // namespace kibench
