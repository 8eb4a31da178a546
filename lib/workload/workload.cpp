// Reading a WorkloadCase into a Workload. The checks follow the KernelIndex
// schema (schemas/workload-case.v1alpha1.schema.json: every object is
// closed, names are identifiers) and then kibench's own, stricter rules:
// only the tensors, scalars, generators and parameters kibench runs for the
// operation (distill_jsd_loss, jsd or fused_linear_jsd), only bf16 (fp32
// log-probabilities for jsd), sizes that fit in memory arithmetic, and loss
// scalars for which the formulas of docs/loss-math.md are defined.
// docs/workloads.md lists them.
#include "lib/workload/workload.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/envelope.hpp"
#include "lib/operations/registry.hpp"
#include "lib/workload/field_reader.hpp"
#include "lib/workload/operation_catalog.hpp"
#include "lib/workload/operation_signature.hpp"

namespace kibench {
namespace {

using detail::Field;
using detail::ObjectReader;

// Each axis fits in a signed 32-bit index, so every product of two axes
// (T*V logits, V*H weights) fits in int64 and kernels may index rows with
// 32-bit integers.
constexpr std::int64_t kMaxAxis = 2147483647;
// JSON integers KernelIndex accepts: |x| <= 2^53 - 1.
constexpr std::int64_t kMaxJsonInteger = 9007199254740991;
// Generated float values must stay finite bf16 after rounding (bf16's
// largest finite value is about 3.39e38).
constexpr double kMaxUniformMagnitude = 1e38;

bool matches_name_pattern(std::string_view name) {
  // ^[a-z0-9][a-z0-9._-]*$
  if (name.empty()) return false;
  const auto allowed = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!first && (c == '.' || c == '_' || c == '-'));
  };
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!allowed(name[i], i == 0)) return false;
  }
  return true;
}

bool matches_digest_pattern(std::string_view text) {
  // ^sha256:[0-9a-f]{64}$
  constexpr std::string_view prefix = "sha256:";
  if (text.size() != prefix.size() + 64 || !text.starts_with(prefix)) return false;
  for (const char c : text.substr(prefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// metadata never changes a manifest's identity, but it must still
// validate; returns metadata.name.
std::string read_metadata(const Field &field) {
  const ObjectReader metadata(field, {"name", "title", "description", "labels", "authors", "sourceRefs"});
  const Field name = metadata.required("name");
  const std::string &text = name.bounded_string(200);
  if (!matches_name_pattern(text))
    name.fail(fmt::format("name {:?} does not match ^[a-z0-9][a-z0-9._-]*$", text));
  if (const auto title = metadata.optional("title")) (void)title->bounded_string(200);
  if (const auto description = metadata.optional("description")) (void)description->bounded_string(2000);
  if (const auto labels = metadata.optional("labels")) {
    if (!labels->value().is_object()) labels->fail("expected an object");
    for (const auto &[key, value] : labels->value().as_object()) {
      const Field label(value, detail::member_path(labels->path(), key), labels->source());
      if (!detail::is_identifier(key)) label.fail("label name does not match ^[a-z][a-z0-9_]*$");
      (void)label.bounded_string(200);
    }
  }
  if (const auto authors = metadata.optional("authors")) {
    for (std::size_t i = 0; i < authors->array().size(); ++i) {
      const ObjectReader author(authors->element(i), {"name", "github"});
      if (const auto author_name = author.optional("name")) (void)author_name->bounded_string(200);
      if (const auto github = author.optional("github")) (void)github->bounded_string(100);
    }
  }
  if (const auto refs = metadata.optional("sourceRefs")) {
    for (std::size_t i = 0; i < refs->array().size(); ++i) {
      const ObjectReader ref(refs->element(i), {"url"});
      (void)ref.required("url").bounded_string(2000);
    }
  }
  return text;
}

// The top of the document up to spec.operationSpecDigest, which
// load_workload needs before it can find the OperationSpec.
struct Envelope {
  std::string name;   // metadata.name
  std::string digest; // spec.operationSpecDigest
  ObjectReader spec;  // the rest, for workload_from_json
};

Envelope read_envelope(const Field &root) {
  const ObjectReader manifest(root, {"apiVersion", "kind", "metadata", "spec"});
  const Field api_version = manifest.required("apiVersion");
  if (api_version.string() != kApiVersion) {
    api_version.fail(fmt::format("apiVersion must be \"{}\", got {:?}", kApiVersion, api_version.string()));
  }
  const Field kind = manifest.required("kind");
  if (kind.string() != "WorkloadCase")
    kind.fail(fmt::format("kind must be \"WorkloadCase\", got {:?}", kind.string()));
  std::string name = read_metadata(manifest.required("metadata"));

  ObjectReader spec(manifest.required("spec"),
                    {"operationSpecDigest", "axes", "tensors", "scalars", "correctness"});
  const Field digest = spec.required("operationSpecDigest");
  if (!matches_digest_pattern(digest.string())) {
    digest.fail(fmt::format("{:?} is not a digest (sha256: and 64 lowercase hex digits)", digest.string()));
  }
  return Envelope{std::move(name), digest.string(), std::move(spec)};
}

// spec.axes: every variable axis of the operation, optionally its derived
// ones (which must then equal their expression).
std::map<std::string, std::int64_t> read_axes(const Field &field,
                                              const detail::OperationSignature &operation) {
  std::vector<std::string_view> names;
  for (const detail::AxisRule &axis : operation.axes()) names.push_back(axis.name);
  const ObjectReader axes(field, names, "axis");

  std::map<std::string, std::int64_t> variable;
  for (const detail::AxisRule &axis : operation.axes()) {
    if (!axis.source_axis) variable[axis.name] = axes.required(axis.name).integer(1, kMaxAxis);
  }
  const std::map<std::string, std::int64_t> bound = operation.bind_axes(variable);
  for (const detail::AxisRule &axis : operation.axes()) {
    if (!axis.source_axis) continue;
    const std::int64_t value = bound.at(axis.name);
    const auto given = axes.optional(axis.name);
    if (given) {
      const std::int64_t stated = given->integer(1, kMaxAxis);
      if (stated != value) {
        given->fail(fmt::format("{} = {} does not match {} // {} = {}", axis.name, stated, *axis.source_axis,
                                axis.divisor, value));
      }
    }
    if (value < 1) {
      axes.required(*axis.source_axis)
          .fail(fmt::format("{} = {} gives {} = {} // {} = {}; every axis must be at least 1",
                            *axis.source_axis, bound.at(*axis.source_axis), axis.name, *axis.source_axis,
                            axis.divisor, value));
    }
  }
  return bound;
}

std::vector<std::int64_t> evaluate_shape(const std::vector<detail::Dimension> &shape,
                                         const std::map<std::string, std::int64_t> &axes) {
  std::vector<std::int64_t> extents;
  for (const detail::Dimension &dim : shape) {
    extents.push_back(std::holds_alternative<std::string>(dim) ? axes.at(std::get<std::string>(dim))
                                                               : std::get<std::int64_t>(dim));
  }
  return extents;
}

// Float tensors use "philox4x32_10_uniform" {low, high}: values low + (high - low) * u,
// u uniform on [0, 1) (lib/inputs/philox.hpp has the bit-level mapping).
// jsd's log-probabilities use "philox4x32_10_uniform_log_softmax" {low, high}: those
// values, each row through log_softmax (lib/inputs/generate.hpp).
GeneratorSpec read_uniform(const ObjectReader &data, const Field &generator, std::string_view expected) {
  GeneratorSpec spec;
  spec.name = generator.string();
  if (spec.name != expected) {
    generator.fail(fmt::format("unsupported generator {:?} for {} (kibench has \"{}\")", spec.name,
                               expected == "philox4x32_10_uniform" ? "a float tensor" : "log-probabilities",
                               expected));
  }
  spec.seed = static_cast<std::uint64_t>(data.required("seed").integer(0, kMaxJsonInteger));
  const ObjectReader parameters(data.required("parameters"), {"low", "high"}, "parameter");
  const Field low = parameters.required("low");
  const Field high = parameters.required("high");
  spec.low = low.number();
  spec.high = high.number();
  for (const auto &[field, value] : {std::pair{&low, spec.low}, std::pair{&high, spec.high}}) {
    if (std::fabs(value) > kMaxUniformMagnitude) {
      field->fail(fmt::format("|{}| exceeds {:g}, beyond which generated values would not be finite bf16",
                              value, kMaxUniformMagnitude));
    }
  }
  if (!(spec.low < spec.high))
    high.fail(fmt::format("high ({}) must be greater than low ({})", spec.high, spec.low));
  return spec;
}

// The target uses "philox4x32_10_uniform_int" {low, high, ignore_fraction}: a class id
// uniform on [low, high) (a subrange of [0, vocab)), replaced by
// ignore_index with probability ignore_fraction.
GeneratorSpec read_uniform_int(const ObjectReader &data, const Field &generator, std::int64_t vocab) {
  GeneratorSpec spec;
  spec.name = generator.string();
  if (spec.name != "philox4x32_10_uniform_int") {
    generator.fail(fmt::format(
        "unsupported generator {:?} for the target (kibench has \"philox4x32_10_uniform_int\")", spec.name));
  }
  spec.seed = static_cast<std::uint64_t>(data.required("seed").integer(0, kMaxJsonInteger));
  const ObjectReader parameters(data.required("parameters"), {"low", "high", "ignore_fraction"}, "parameter");
  const std::int64_t low = parameters.required("low").integer(0, vocab - 1);
  const Field high_field = parameters.required("high");
  const std::int64_t high = high_field.integer(1, vocab);
  if (low >= high) high_field.fail(fmt::format("high ({}) must be greater than low ({})", high, low));
  const Field fraction = parameters.required("ignore_fraction");
  spec.ignore_fraction = fraction.number();
  if (!(spec.ignore_fraction >= 0.0 && spec.ignore_fraction <= 1.0)) {
    fraction.fail(fmt::format("ignore_fraction {} is outside [0, 1]", spec.ignore_fraction));
  }
  spec.low = static_cast<double>(low);
  spec.high = static_cast<double>(high);
  return spec;
}

struct TensorRule {
  std::vector<std::int64_t> shape; // the extents the axes imply
  std::string symbolic;            // e.g. "[tokens, student_hidden]"
  bool is_float = true;            // else int64 (the target)
  bool is_required = true;         // the biases, and jsd's and fused_linear_jsd's target, are optional
  std::string_view float_dtype = "bf16";               // the operation's one float dtype
  std::string_view generator = "philox4x32_10_uniform"; // for a float tensor
  std::string_view float_dtype_reason;                  // appended to a dtype error
};

GeneratorSpec read_tensor(const Field &field, const TensorRule &rule, std::int64_t vocab) {
  const ObjectReader tensor(field, {"shape", "dtype", "strides", "alignmentBytes", "data"});
  if (const auto strides = tensor.optional("strides")) {
    strides->fail("strides are not supported: kibench's inputs are dense and row-major");
  }
  if (const auto alignment = tensor.optional("alignmentBytes")) {
    alignment->fail("alignmentBytes is not supported: kibench allocates its inputs itself");
  }

  const Field shape = tensor.required("shape");
  std::vector<std::int64_t> extents;
  for (std::size_t i = 0; i < shape.array().size(); ++i)
    extents.push_back(shape.element(i).integer(0, kMaxJsonInteger));
  if (extents != rule.shape) {
    shape.fail(fmt::format("shape [{}] does not match {} = [{}]", fmt::join(extents, ", "), rule.symbolic,
                           fmt::join(rule.shape, ", ")));
  }

  const Field dtype = tensor.required("dtype");
  if (rule.is_float && dtype.string() != rule.float_dtype) {
    dtype.fail(fmt::format("unsupported dtype {:?} (kibench supports {} float tensors{})", dtype.string(),
                           rule.float_dtype, rule.float_dtype_reason));
  }
  if (!rule.is_float && dtype.string() != "int64") {
    dtype.fail(fmt::format("unsupported dtype {:?} (the target is int64)", dtype.string()));
  }

  const ObjectReader data(tensor.required("data"), {"generator", "seed", "parameters", "artifact"});
  if (const auto artifact = data.optional("artifact")) {
    artifact->fail("artifact data is not supported: kibench generates its inputs (give a generator)");
  }
  const Field generator = data.required("generator");
  return rule.is_float ? read_uniform(data, generator, rule.generator)
                       : read_uniform_int(data, generator, vocab);
}

// The number of elements in every tensor, and their bytes together, must
// be representable: each product and the sum are checked for overflow.
void check_sizes(const Field &axes, const std::vector<std::pair<std::string, TensorRule>> &tensors) {
  std::uint64_t total_bytes = 0;
  for (const auto &[name, rule] : tensors) {
    std::uint64_t elements = 1;
    for (const std::int64_t extent : rule.shape) {
      if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(extent), &elements)) {
        axes.fail(fmt::format("{} {} has more elements than 64 bits can count", name, rule.symbolic));
      }
    }
    std::uint64_t bytes = 0;
    const std::uint64_t element_size = !rule.is_float ? 8u : rule.float_dtype == "fp32" ? 4u : 2u;
    if (__builtin_mul_overflow(elements, element_size, &bytes) ||
        __builtin_add_overflow(total_bytes, bytes, &total_bytes) ||
        elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      axes.fail(fmt::format("the input tensors need more bytes than 64 bits can count (at {})", name));
    }
  }
}

// A {dtype: "fp32", value} scalar: returns its value, a finite number
// within fp32's range.
Field fp32_scalar(const ObjectReader &scalars, std::string_view name) {
  const ObjectReader scalar(scalars.required(name), {"dtype", "value"});
  const Field dtype = scalar.required("dtype");
  if (dtype.string() != "fp32") {
    dtype.fail(fmt::format("{} must have dtype \"fp32\", got {:?}", name, dtype.string()));
  }
  Field value = scalar.required("value");
  if (std::fabs(value.number()) > FLT_MAX) {
    value.fail(fmt::format("{} = {} does not fit in fp32", name, value.number()));
  }
  return value;
}

LossScalars read_scalars(const Field &field, std::int64_t vocab, const Operation &operation) {
  const std::vector<std::string_view> names(operation.scalar_names().begin(), operation.scalar_names().end());
  const ObjectReader scalars(field, names, "scalar");
  LossScalars loss;
  const auto states = [&](std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  operation.fix_scalars(loss);

  if (states("beta")) {
    const Field beta = fp32_scalar(scalars, "beta");
    loss.beta = beta.number();
    if (!(loss.beta >= 0.0 && loss.beta <= 1.0))
      beta.fail(fmt::format("beta = {} is outside [0, 1]", loss.beta));
  }

  // z / tau and its gradient 1/tau must be finite in fp32, so tau is a
  // normal fp32 number (|tau| >= FLT_MIN); a negative tau is well defined.
  if (states("temperature")) {
    const Field temperature = fp32_scalar(scalars, "temperature");
    loss.temperature = temperature.number();
    if (std::fabs(loss.temperature) < FLT_MIN) {
      temperature.fail(fmt::format(
          "temperature = {} must be nonzero and a normal fp32 number (|tau| >= {:g})", loss.temperature,
          FLT_MIN));
    }
  }

  for (const auto &[name, weight] :
       {std::pair{"weight_hard_loss", &loss.weight_hard}, std::pair{"weight_soft_loss", &loss.weight_soft}}) {
    if (!states(name)) continue;
    const Field value = fp32_scalar(scalars, name);
    *weight = value.number();
    if (*weight < 0.0) value.fail(fmt::format("{} = {} must be at least 0", name, *weight));
  }

  const ObjectReader ignore(scalars.required("ignore_index"), {"dtype", "value"});
  const Field dtype = ignore.required("dtype");
  if (dtype.string() != "int64") {
    dtype.fail(fmt::format("ignore_index must have dtype \"int64\", got {:?}", dtype.string()));
  }
  const Field value = ignore.required("value");
  loss.ignore_index = value.integer(-kMaxJsonInteger, kMaxJsonInteger);
  // An ignore_index inside [0, vocab) would make a real class unlearnable
  // and the target generator's ids ambiguous.
  if (loss.ignore_index >= 0 && loss.ignore_index < vocab) {
    value.fail(fmt::format("ignore_index = {} is a class id in [0, {}); it must lie outside",
                           loss.ignore_index, vocab));
  }
  return loss;
}

CorrectnessPolicy read_correctness(const Field &field) {
  const ObjectReader correctness(field, {"comparator", "maxAbsoluteError", "maxRelativeError",
                                         "requiredMatchedRatio", "nanPolicy", "infinityPolicy"});
  CorrectnessPolicy policy;
  const Field comparator = correctness.required("comparator");
  policy.comparator = comparator.string();
  if (!known_comparator(policy.comparator)) {
    comparator.fail(fmt::format("unsupported comparator {:?} (kibench has \"{}\" and \"{}\")",
                                policy.comparator, kComparatorLossRelAbs, kComparatorRelL2));
  }
  if (const auto ratio = correctness.optional("requiredMatchedRatio")) {
    ratio->fail(fmt::format("requiredMatchedRatio is not used by comparator \"{}\"", policy.comparator));
  }
  const auto tolerance = [&](std::string_view key) {
    const Field tolerance_field = correctness.required(key);
    const double x = tolerance_field.number();
    if (x < 0.0) tolerance_field.fail(fmt::format("{} = {} must be at least 0", key, x));
    return x;
  };
  policy.max_relative_error = tolerance("maxRelativeError");
  policy.max_absolute_error = tolerance("maxAbsoluteError");
  const auto reject_only = [&](std::string_view key) {
    const Field policy_field = correctness.required(key);
    const std::string &value = policy_field.string();
    if (value == "reject") return value;
    if (value == "exact_match" || value == "ignore") {
      policy_field.fail(
          fmt::format("{} {:?} is not supported (kibench rejects every non-finite output)", key, value));
    }
    policy_field.fail(fmt::format("{} must be one of reject, exact_match, ignore; got {:?}", key, value));
  };
  policy.nan_policy = reject_only("nanPolicy");
  policy.infinity_policy = reject_only("infinityPolicy");
  return policy;
}

// kibench's implementations compute docs/loss-math.md on exactly these
// inputs: an OperationSpec binds a workload only when its signature is a
// registered operation's (lib/operations/): its inputs in order, with their
// symbolic shapes and dtypes, and its variable axes.

// Why `operation` is not `expected` (nullopt when it is).
std::optional<std::string> signature_mismatch(const detail::OperationSignature &operation,
                                              const Operation &expected) {
  const std::span<const OperationInput> inputs = expected.inputs();
  if (operation.inputs().size() != inputs.size()) {
    return fmt::format("has {} inputs, not {}", operation.inputs().size(), inputs.size());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const detail::InputSignature &input = operation.inputs()[i];
    const OperationInput &want = inputs[i];
    const std::string shape = detail::to_string(input.shape);
    if (input.name != want.name || shape != want.shape || input.dtype != want.dtype) {
      return fmt::format("has input {} {} {} where kibench expects {} {} {}", i, input.name, shape, input.dtype,
                         want.name, want.shape, want.dtype);
    }
  }
  const std::span<const std::string_view> variable = expected.variable_axes();
  const bool derived = expected.derives_student_hidden();
  for (const detail::AxisRule &axis : operation.axes()) {
    const bool is_variable = std::find(variable.begin(), variable.end(), axis.name) != variable.end();
    const bool is_student_hidden = derived && axis.name == "student_hidden" && axis.source_axis == "hidden";
    if (is_variable ? axis.source_axis.has_value() : !is_student_hidden) {
      return fmt::format("defines axis \"{}\" differently (kibench expects variable {}{})", axis.name,
                         fmt::join(variable, ", "), derived ? " and student_hidden = hidden // k" : "");
    }
  }
  if (operation.axes().size() != variable.size() + (derived ? 1 : 0)) {
    return fmt::format("does not define the {} axes", variable.size() + (derived ? 1 : 0));
  }
  return std::nullopt;
}

// Which registered operation `operation` is: the one whose curated
// OperationSpec has its digest, else the first whose signature it has (an
// OperationSpec written elsewhere for the same math); the error names the
// first difference from the one with as many inputs (or the count).
OperationKind classify_operation(const detail::OperationSignature &operation, const Field &digest) {
  for (const OperationKind curated : registered_operations())
    if (curated->digest() == digest.string() && !signature_mismatch(operation, curated.operation())) return curated;
  std::optional<std::string> why;
  for (const OperationKind expected : registered_operations()) {
    const auto mismatch = signature_mismatch(operation, expected.operation());
    if (!mismatch) return expected;
    if (operation.inputs().size() == expected->inputs().size() && !why) why = mismatch;
  }
  if (!why) why = fmt::format("has {} inputs", operation.inputs().size());
  digest.fail(fmt::format("OperationSpec {:?} {}; kibench runs {}", operation.name(), *why, operation_names()));
}

// Where the reader puts the generator of the tensor `name`.
void assign_generator(Workload &workload, std::string_view name, const GeneratorSpec &generator) {
  const std::pair<std::string_view, GeneratorSpec *> required[] = {
      {"student_input", &workload.student_input},         {"student_weight", &workload.student_weight},
      {"teacher_input", &workload.teacher_input},         {"teacher_weight", &workload.teacher_weight},
      {"student_log_probs", &workload.student_log_probs}, {"teacher_log_probs", &workload.teacher_log_probs},
      {"target", &workload.target}};
  for (const auto &[slot, into] : required)
    if (slot == name) {
      *into = generator;
      return;
    }
  if (name == "student_bias") workload.student_bias = generator;
  else if (name == "teacher_bias") workload.teacher_bias = generator;
  else throw std::logic_error(fmt::format("workload reader: no place for tensor {:?}", name));
}

// The target of a workload without labels: every token counts.
GeneratorSpec no_ignored_targets(std::int64_t vocab) {
  return GeneratorSpec{.name = "philox4x32_10_uniform_int",
                       .seed = 0,
                       .low = 0.0,
                       .high = static_cast<double>(vocab),
                       .ignore_fraction = 0.0};
}

} // namespace

Workload workload_from_json(const json::Value &manifest, const json::Value &operation,
                            const std::filesystem::path &source) {
  const std::string source_name = source.string();
  const Field root(manifest, "$", source_name);
  Workload workload;
  workload.source = source;
  const Envelope envelope = read_envelope(root);
  workload.name = envelope.name;
  const std::string &digest = envelope.digest;
  const ObjectReader &spec = envelope.spec;
  const Field digest_field = spec.required("operationSpecDigest");
  const std::string operation_digest = manifest_digest(operation);
  if (operation_digest != digest) {
    digest_field.fail(
        fmt::format("{} is not the digest of the OperationSpec given ({})", digest, operation_digest));
  }
  const auto signature =
      detail::OperationSignature::read(operation, fmt::format("{}: OperationSpec {}", source_name, digest));

  const OperationKind kind = classify_operation(signature, digest_field);
  const Operation &op = kind.operation();
  workload.operation_kind = kind;

  const Field axes_field = spec.required("axes");
  const std::map<std::string, std::int64_t> axes = read_axes(axes_field, signature);
  workload.tokens = axes.at("tokens");
  workload.vocab = axes.at("vocab");
  op.bind_axes(workload, axes);

  // Every tensor a workload may give, with the shape its axes imply.
  const std::string_view float_dtype = op.float_type() == FloatType::fp32 ? "fp32" : "bf16";
  std::vector<std::pair<std::string, TensorRule>> rules;
  for (const detail::InputSignature &input : signature.inputs()) {
    rules.emplace_back(input.name, TensorRule{evaluate_shape(input.shape, axes), detail::to_string(input.shape),
                                              input.dtype == "float", true, float_dtype, op.float_generator(),
                                              op.float_type_reason()});
  }
  for (const OptionalTensor &tensor : op.optional_tensors()) {
    rules.emplace_back(std::string(tensor.name),
                       TensorRule{{axes.at(std::string(tensor.axis))}, fmt::format("[{}]", tensor.axis),
                                  tensor.is_float, false, float_dtype,
                                  op.float_generator(), op.float_type_reason()});
  }
  check_sizes(axes_field, rules);

  std::vector<std::string_view> tensor_names;
  for (const auto &[name, rule] : rules) tensor_names.push_back(name);
  const ObjectReader tensors(spec.required("tensors"), tensor_names, "tensor");
  workload.dtype = op.float_type();
  workload.has_target = false;
  for (const auto &[name, rule] : rules) {
    const std::optional<Field> tensor = rule.is_required ? tensors.required(name) : tensors.optional(name);
    if (!tensor) continue;
    assign_generator(workload, name, read_tensor(*tensor, rule, workload.vocab));
    if (name == "target") workload.has_target = true;
  }
  if (!workload.has_target) workload.target = no_ignored_targets(workload.vocab);

  workload.scalars = read_scalars(spec.required("scalars"), workload.vocab, op);
  workload.correctness = read_correctness(spec.required("correctness"));
  workload.manifest = manifest;
  workload.operation = operation;
  return workload;
}

Workload load_workload(const std::filesystem::path &file) {
  const json::Value manifest = json::parse_file(file, io::file_kinds::workload);
  const std::string source_name = file.string();
  const std::string digest = read_envelope(Field(manifest, "$", source_name)).digest;

  const auto dirs = detail::operation_search_dirs(file, default_workloads_dir());
  const std::optional<json::Value> operation = detail::find_operation(digest, dirs);
  if (!operation) {
    std::vector<std::string> searched;
    for (const auto &dir : dirs) searched.push_back(dir.string());
    throw InputError(fmt::format(
        "{}: $.spec.operationSpecDigest: no OperationSpec with digest {} in {}", file.string(), digest,
        searched.empty() ? "(no operations/ folder found)" : fmt::format("{}", fmt::join(searched, ", "))));
  }
  return workload_from_json(manifest, *operation, file);
}

std::string CorrectnessPolicy::describe_rule() const {
  if (comparator != kComparatorLossRelAbs) return ""; // fp64_oracle_rel_l2 says it in its name
  return fmt::format("loss: |loss - ref| <= max({} |ref|, {}); gradients: rel L2 <= {} (max abs <= {} where "
                     "the reference is zero)",
                     json::format_number(kLossRelativeTolerance), json::format_number(kLossAbsoluteFloor),
                     json::format_number(max_relative_error), json::format_number(max_absolute_error));
}

} // namespace kibench
