// Reading a WorkloadCase into a Workload. The checks follow the KernelIndex
// schema (schemas/workload-case.v1alpha1.schema.json: every object is
// closed, names are identifiers) and then kibench's own, stricter rules:
// only the tensors, scalars, generators and parameters kibench runs, only
// bf16, sizes that fit in memory arithmetic, and loss scalars for which the
// formulas of docs/loss-math.md are defined. docs/workloads.md lists them.
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
#include "lib/json/parse.hpp"
#include "lib/manifest/envelope.hpp"
#include "lib/workload/field_reader.hpp"
#include "lib/workload/operation_catalog.hpp"
#include "lib/workload/operation_signature.hpp"

namespace kibench {
namespace {

using detail::Field;
using detail::ObjectReader;

constexpr std::string_view kComparator = "fp64_oracle_rel_l2";

// Each axis fits in a signed 32-bit index, so every product of two axes
// (T*V logits, V*H weights) fits in int64 and kernels may index rows with
// 32-bit integers.
constexpr std::int64_t kMaxAxis = 2147483647;
// JSON integers KernelIndex accepts: |x| <= 2^53 - 1.
constexpr std::int64_t kMaxJsonInteger = 9007199254740991;
// Generated float values must stay finite bf16 after rounding (bf16's
// largest finite value is about 3.39e38).
constexpr double kMaxUniformMagnitude = 1e38;

// The input tensors kibench's implementations take, beyond the
// OperationSpec's own inputs: the optional LM-head biases, shape [vocab].
constexpr std::array<std::string_view, 2> kBiasTensors{"student_bias", "teacher_bias"};
constexpr std::array<std::string_view, 5> kScalarNames{"beta", "temperature", "weight_hard_loss",
                                                       "weight_soft_loss", "ignore_index"};

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
GeneratorSpec read_uniform(const ObjectReader &data, const Field &generator) {
  GeneratorSpec spec;
  spec.name = generator.string();
  if (spec.name != "philox4x32_10_uniform") {
    generator.fail(fmt::format(
        "unsupported generator {:?} for a float tensor (kibench has \"philox4x32_10_uniform\")", spec.name));
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
  if (rule.is_float && dtype.string() != "bf16") {
    dtype.fail(fmt::format("unsupported dtype {:?} (kibench supports bf16 float tensors)", dtype.string()));
  }
  if (!rule.is_float && dtype.string() != "int64") {
    dtype.fail(fmt::format("unsupported dtype {:?} (the target is int64)", dtype.string()));
  }

  const ObjectReader data(tensor.required("data"), {"generator", "seed", "parameters", "artifact"});
  if (const auto artifact = data.optional("artifact")) {
    artifact->fail("artifact data is not supported: kibench generates its inputs (give a generator)");
  }
  const Field generator = data.required("generator");
  return rule.is_float ? read_uniform(data, generator) : read_uniform_int(data, generator, vocab);
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
    if (__builtin_mul_overflow(elements, rule.is_float ? 2u : 8u, &bytes) ||
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

LossScalars read_scalars(const Field &field, std::int64_t vocab) {
  const ObjectReader scalars(field, kScalarNames, "scalar");
  LossScalars loss;

  const Field beta = fp32_scalar(scalars, "beta");
  loss.beta = beta.number();
  if (!(loss.beta >= 0.0 && loss.beta <= 1.0))
    beta.fail(fmt::format("beta = {} is outside [0, 1]", loss.beta));

  // z / tau and its gradient 1/tau must be finite in fp32, so tau is a
  // normal fp32 number (|tau| >= FLT_MIN); a negative tau is well defined.
  const Field temperature = fp32_scalar(scalars, "temperature");
  loss.temperature = temperature.number();
  if (std::fabs(loss.temperature) < FLT_MIN) {
    temperature.fail(fmt::format("temperature = {} must be nonzero and a normal fp32 number (|tau| >= {:g})",
                                 loss.temperature, FLT_MIN));
  }

  for (const auto &[name, weight] :
       {std::pair{"weight_hard_loss", &loss.weight_hard}, std::pair{"weight_soft_loss", &loss.weight_soft}}) {
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
  if (policy.comparator != kComparator) {
    comparator.fail(
        fmt::format("unsupported comparator {:?} (kibench has \"{}\")", policy.comparator, kComparator));
  }
  if (const auto ratio = correctness.optional("requiredMatchedRatio")) {
    ratio->fail(fmt::format("requiredMatchedRatio is not used by comparator \"{}\"", kComparator));
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
// inputs: an OperationSpec binds a workload only when its signature is
// this one. The derived axis may divide hidden by any k (the kernels take
// Hs as a parameter); KernelIndex's distill_jsd_loss has k = 2.
void check_distill_signature(const detail::OperationSignature &operation, const Field &digest) {
  struct Expected {
    std::string_view name;
    std::string_view shape;
    std::string_view dtype;
  };
  constexpr std::array<Expected, 5> expected{{{"student_input", "[tokens, student_hidden]", "float"},
                                              {"student_weight", "[vocab, student_hidden]", "float"},
                                              {"teacher_input", "[tokens, hidden]", "float"},
                                              {"teacher_weight", "[vocab, hidden]", "float"},
                                              {"target", "[tokens]", "int64"}}};
  const auto unsupported = [&](std::string_view why) {
    digest.fail(fmt::format("OperationSpec {:?} {}; kibench runs distill_jsd_loss", operation.name(), why));
  };
  if (operation.inputs().size() != expected.size()) {
    unsupported(fmt::format("has {} inputs, not {}", operation.inputs().size(), expected.size()));
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const detail::InputSignature &input = operation.inputs()[i];
    const std::string shape = detail::to_string(input.shape);
    if (input.name != expected[i].name || shape != expected[i].shape || input.dtype != expected[i].dtype) {
      unsupported(fmt::format("has input {} {} {} where kibench expects {} {} {}", i, input.name, shape,
                              input.dtype, expected[i].name, expected[i].shape, expected[i].dtype));
    }
  }
  const std::array<std::string_view, 3> variable{"tokens", "vocab", "hidden"};
  for (const detail::AxisRule &axis : operation.axes()) {
    const bool is_variable = std::find(variable.begin(), variable.end(), axis.name) != variable.end();
    const bool is_student_hidden = axis.name == "student_hidden" && axis.source_axis == "hidden";
    if (is_variable ? axis.source_axis.has_value() : !is_student_hidden) {
      unsupported(
          fmt::format("defines axis \"{}\" differently (kibench expects variable tokens, vocab, hidden "
                      "and student_hidden = hidden // k)",
                      axis.name));
    }
  }
  if (operation.axes().size() != variable.size() + 1) unsupported("does not define the four axes");
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

  check_distill_signature(signature, digest_field);

  const Field axes_field = spec.required("axes");
  const std::map<std::string, std::int64_t> axes = read_axes(axes_field, signature);
  workload.tokens = axes.at("tokens");
  workload.vocab = axes.at("vocab");
  workload.hidden = axes.at("hidden");
  workload.student_hidden = axes.at("student_hidden");

  // Every tensor a workload may give, with the shape its axes imply.
  std::vector<std::pair<std::string, TensorRule>> rules;
  for (const detail::InputSignature &input : signature.inputs()) {
    rules.emplace_back(input.name, TensorRule{evaluate_shape(input.shape, axes),
                                              detail::to_string(input.shape), input.dtype == "float"});
  }
  for (const std::string_view bias : kBiasTensors) {
    rules.emplace_back(std::string(bias), TensorRule{{workload.vocab}, "[vocab]", true});
  }
  check_sizes(axes_field, rules);

  std::vector<std::string_view> tensor_names;
  for (const auto &[name, rule] : rules) tensor_names.push_back(name);
  const ObjectReader tensors(spec.required("tensors"), tensor_names, "tensor");
  std::map<std::string, GeneratorSpec> generators;
  for (const auto &[name, rule] : rules) {
    const bool is_bias = name == kBiasTensors[0] || name == kBiasTensors[1];
    const std::optional<Field> tensor = is_bias ? tensors.optional(name) : tensors.required(name);
    if (tensor) generators[name] = read_tensor(*tensor, rule, workload.vocab);
  }
  workload.dtype = FloatType::bf16;
  workload.student_input = generators.at("student_input");
  workload.student_weight = generators.at("student_weight");
  workload.teacher_input = generators.at("teacher_input");
  workload.teacher_weight = generators.at("teacher_weight");
  workload.target = generators.at("target");
  if (generators.contains("student_bias")) workload.student_bias = generators.at("student_bias");
  if (generators.contains("teacher_bias")) workload.teacher_bias = generators.at("teacher_bias");

  workload.scalars = read_scalars(spec.required("scalars"), workload.vocab);
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

std::uint64_t Workload::input_bytes() const {
  const auto t = static_cast<std::uint64_t>(tokens), v = static_cast<std::uint64_t>(vocab);
  const auto h = static_cast<std::uint64_t>(hidden), hs = static_cast<std::uint64_t>(student_hidden);
  constexpr std::uint64_t bf16_bytes = 2, int64_bytes = 8;
  std::uint64_t elements = t * hs + v * hs + t * h + v * h;
  if (student_bias) elements += v;
  if (teacher_bias) elements += v;
  return elements * bf16_bytes + t * int64_bytes;
}

double Workload::gemm_flops(bool with_backward) const {
  const double t = static_cast<double>(tokens), v = static_cast<double>(vocab);
  const double h = static_cast<double>(hidden), hs = static_cast<double>(student_hidden);
  // Forward: z_s = x_s W_s^T and z_t = x_t W_t^T, 2 flops per multiply-add.
  double flops = 2.0 * t * v * hs + 2.0 * t * v * h;
  // Backward: grad x_s = G W_s and grad W_s = G^T x_s; the teacher has none.
  if (with_backward) flops += 2.0 * 2.0 * t * v * hs;
  return flops;
}

} // namespace kibench
