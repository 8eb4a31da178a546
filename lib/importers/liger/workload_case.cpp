#include "lib/importers/liger/workload_case.hpp"

#include <map>
#include <variant>

#include <fmt/format.h>

#include "lib/importers/liger/naming.hpp"
#include "lib/importers/liger/skip_reason.hpp"
#include "lib/manifest/envelope.hpp"

namespace kibench::importers::liger {
namespace {

std::string metadata_string(const json::Value &manifest, std::string_view key) {
  const json::Value *metadata = manifest.find("metadata");
  const json::Value *value = metadata ? metadata->find(key) : nullptr;
  return value != nullptr && value->is_string() ? value->as_string() : std::string();
}

// The operation's variable axes, in its order, with the row's values.
std::map<std::string, std::int64_t> variable_axes(const detail::OperationSignature &signature,
                                                  const BoundCase &bound) {
  std::map<std::string, std::int64_t> values;
  for (const auto &[name, value] : bound.axes) {
    const detail::AxisRule *rule = signature.find_axis(name);
    if (rule == nullptr || rule->source_axis)
      throw RowSkipped(SkipReason::did_not_bind,
                       fmt::format("operation {} has no variable axis \"{}\"", signature.name(), name));
    values[name] = value;
  }
  for (const detail::AxisRule &rule : signature.axes()) {
    if (!rule.source_axis && !values.contains(rule.name))
      throw RowSkipped(SkipReason::did_not_bind, fmt::format("the row gives no value for axis \"{}\" of {}",
                                                             rule.name, signature.name()));
  }
  return values;
}

} // namespace

json::Value not_asserted_correctness() {
  return json::Object{{"comparator", "not_asserted"}};
}

WorkloadCaseRecord make_workload_case(const CuratedManifest &operation,
                                      const detail::OperationSignature &signature, const BoundCase &bound) {
  const std::map<std::string, std::int64_t> variable = variable_axes(signature, bound);
  const std::map<std::string, std::int64_t> all_axes = signature.bind_axes(variable);

  json::Object axes;
  std::vector<std::pair<std::string, std::int64_t>> key_axes;
  for (const detail::AxisRule &rule : signature.axes()) {
    if (rule.source_axis) continue;
    axes.set(rule.name, variable.at(rule.name));
    key_axes.emplace_back(rule.name, variable.at(rule.name));
  }

  // Inputs only: outputs follow from them and are not part of a case.
  json::Object tensors;
  for (const detail::InputSignature &input : signature.inputs()) {
    json::Array shape;
    for (const detail::Dimension &dim : input.shape) {
      shape.emplace_back(std::holds_alternative<std::string>(dim) ? all_axes.at(std::get<std::string>(dim))
                                                                  : std::get<std::int64_t>(dim));
    }
    tensors.set(input.name, json::Object{{"dtype", input.dtype == "float" ? bound.float_dtype : input.dtype},
                                         {"shape", std::move(shape)}});
  }

  json::Object spec{
      {"operationSpecDigest", operation.digest}, {"axes", std::move(axes)}, {"tensors", std::move(tensors)}};
  if (!bound.scalars.empty()) {
    json::Object scalars;
    for (const auto &[name, value] : bound.scalars)
      scalars.set(name, json::Object{{"dtype", "fp32"}, {"value", value}});
    spec.set("scalars", std::move(scalars));
  }
  spec.set("correctness", not_asserted_correctness());

  WorkloadCaseRecord record;
  record.case_key = case_key(std::move(key_axes), bound.float_dtype);
  const std::string operation_name = metadata_string(operation.manifest, "name");
  const std::string operation_title = metadata_string(operation.manifest, "title");
  json::Object metadata{{"name", import_kebab(fmt::format("{}-{}", operation_name, record.case_key))}};
  if (!operation_title.empty())
    metadata.set("title", fmt::format("{} · {}", operation_title, record.case_key));
  record.manifest = make_manifest("WorkloadCase", std::move(metadata), std::move(spec));
  return record;
}

} // namespace kibench::importers::liger
