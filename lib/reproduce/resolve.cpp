#include "lib/reproduce/resolve.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/io/input_file.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/workload/operation_catalog.hpp"

namespace kibench::reproduce {
namespace {

namespace fs = std::filesystem;

// The lanes of Liger-Kernel's benchmark providers (KernelIndex's curated
// ImplementationRevisions are keyed "<kernel>/<provider>"): `torch` is the
// PyTorch eager reference of Liger's benchmark scripts, `liger` Liger's own.
// Liger's jsd rows are reproduced by the `-script` lanes, which time what
// benchmark_jsd.py times: the input's log_softmax backward and the leaf's
// gradient accumulation included (docs/side-by-side.md).
struct ProviderLane {
  std::string_view kernel, provider, lane;
};
constexpr std::array<ProviderLane, 6> kProviderLanes{{
    {"distill_jsd_loss", "torch", "torch-eager"},
    {"distill_jsd_loss", "liger", "liger"},
    {"jsd", "torch", "torch-eager-jsd-script"},
    {"jsd", "liger", "liger-jsd-script"},
    {"fused_linear_jsd", "torch", "torch-eager-fused-linear-jsd"},
    {"fused_linear_jsd", "liger", "liger-fused-linear-jsd"},
}};

// python/kibench/lanes.py SHIPPED.
constexpr std::array<std::string_view, 9> kPythonLanes{
    "torch-eager",      "torch-compile",          "liger",
    "torch-eager-jsd",  "liger-jsd",              "torch-eager-jsd-script",
    "liger-jsd-script", "torch-eager-fused-linear-jsd", "liger-fused-linear-jsd"};

bool is_known(const std::vector<ImplementationEntry> &known, std::string_view name) {
  return std::any_of(known.begin(), known.end(),
                     [&](const ImplementationEntry &e) { return e.name == name; });
}

// `name` must be one `known` offers; the message says how to get it where
// it is a Python lane outside `python -m kibench`.
void require_known(const std::vector<ImplementationEntry> &known, const std::string &name,
                   const std::string &where, const std::string &mapped) {
  if (is_known(known, name)) return;
  if (is_python_lane(name))
    throw InputError(fmt::format("{}: {} is a Python lane: run `python -m kibench reproduce` (pip install .)",
                                 where, mapped));
  std::vector<std::string> names;
  for (const auto &e : known) names.push_back(e.name);
  throw InputError(
      fmt::format("{}: unknown implementation {} (known: {})", where, mapped, fmt::join(names, ", ")));
}

void resolve_implementation(const OriginalRun &original, const std::vector<ImplementationEntry> &known,
                            ResolvedRun &out) {
  const std::string labelled = json::string_at(original.run, "metadata.labels.implementation");
  if (!labelled.empty() && json::member_at(original.run, "spec.sourceNative") == nullptr) {
    require_known(known, labelled, fmt::format("{}: metadata.labels.implementation", original.label),
                  fmt::format("\"{}\"", labelled));
    out.implementation = labelled;
    out.implementation_from = fmt::format("metadata.labels.implementation \"{}\"", labelled);
    return;
  }
  const std::string digest = json::string_at(original.run, "spec.implementationDigest");
  const std::string where = fmt::format("{}: spec.implementationDigest", original.label);
  if (digest.empty())
    throw InputError(fmt::format("{}: missing (and no metadata.labels.implementation)", where));
  if (!original.implementation || original.implementation->curated_key.empty())
    throw InputError(fmt::format("{}: {}: no implementation kibench knows has this digest (a kibench run's "
                                 "metadata.labels.implementation, or Liger-Kernel's torch or liger provider "
                                 "as KernelIndex curates them)",
                                 where, digest));
  const std::string &key = original.implementation->curated_key; // "<kernel>/<provider>"
  const std::size_t slash = key.find('/');
  const std::string kernel = key.substr(0, slash);
  const std::string provider = slash == std::string::npos ? std::string() : key.substr(slash + 1);
  const auto it = std::find_if(kProviderLanes.begin(), kProviderLanes.end(), [&](const ProviderLane &p) {
    return p.kernel == kernel && p.provider == provider;
  });
  if (it == kProviderLanes.end())
    throw InputError(fmt::format("{}: {}: Liger-Kernel's provider \"{}\" of {} has no kibench implementation",
                                 where, digest, provider, kernel));
  const std::string lane(it->lane);
  const std::string mapped = fmt::format("{} (Liger-Kernel's {} provider of {})", lane, provider, kernel);
  require_known(known, lane, where, mapped);
  out.implementation = lane;
  out.implementation_from = fmt::format(
      "spec.implementationDigest: KernelIndex's curated ImplementationRevision \"{}\", Liger-Kernel's "
      "{} provider",
      key, provider);
}

void resolve_pass(const OriginalRun &original, ResolvedRun &out) {
  std::string mode = json::string_at(original.run, "metadata.labels.pass");
  std::string field = "metadata.labels.pass";
  if (mode.empty() && original.protocol && !original.protocol->curated_key.empty()) {
    mode = original.protocol->curated_key;
    field = "spec.protocolDigest";
    out.pass_from = fmt::format("spec.protocolDigest: KernelIndex's curated BenchmarkProtocol \"{}\"", mode);
  }
  if (mode.empty()) {
    const std::string benchmark = json::string_at(original.run, "spec.sourceNative.benchmark");
    if (const std::size_t slash = benchmark.rfind('/'); slash != std::string::npos) {
      mode = benchmark.substr(slash + 1);
      field = "spec.sourceNative.benchmark";
    }
  }
  if (mode.empty())
    throw InputError(fmt::format("{}: metadata.labels.pass: missing (nor a curated protocol or "
                                 "spec.sourceNative.benchmark names the timed pass)",
                                 original.label));
  const auto pass = pass_from_string(mode);
  if (!pass)
    throw InputError(
        fmt::format("{}: {}: pass \"{}\" is not forward, backward or full", original.label, field, mode));
  out.pass = *pass;
  if (out.pass_from.empty()) out.pass_from = fmt::format("{} \"{}\"", field, mode);
}

// Every tensor states how it is generated: a case kibench runs as it is.
bool is_generatable(const json::Value &workload) {
  const json::Value *tensors = json::member_at(workload, "spec.tensors");
  if (tensors == nullptr || !tensors->is_object() || tensors->as_object().empty()) return false;
  for (const auto &[name, tensor] : tensors->as_object())
    if (tensor.find("data") == nullptr) return false;
  return true;
}

const json::Value &member_or_null(const json::Value &value, std::string_view path) {
  static const json::Value null;
  const json::Value *member = json::member_at(value, path);
  return member != nullptr ? *member : null;
}

// The first thing in which `shipped` is not the record's case, as
// "<field>: <record> vs <shipped>"; empty when it matches: the same
// operation and axes, the same tensors with the same dtypes and shapes,
// and every scalar the record states.
std::string mismatch(const json::Value &record, const json::Value &shipped) {
  for (const std::string_view field : {"spec.operationSpecDigest", "spec.axes"}) {
    const json::Value &a = member_or_null(record, field), &b = member_or_null(shipped, field);
    if (!(a == b)) return fmt::format("{}: {} vs {}", field, json::canonical(a), json::canonical(b));
  }
  const json::Value &a = member_or_null(record, "spec.tensors"), &b = member_or_null(shipped, "spec.tensors");
  if (!a.is_object() || !b.is_object()) return "spec.tensors: missing";
  for (const auto &[name, tensor] : a.as_object()) {
    const json::Value *other = b.find(name);
    if (other == nullptr) return fmt::format("spec.tensors.{}: not generated by the shipped case", name);
    for (const std::string_view key : {"dtype", "shape"}) {
      const json::Value &x = member_or_null(tensor, key), &y = member_or_null(*other, key);
      if (!(x == y))
        return fmt::format("spec.tensors.{}.{}: {} vs {}", name, key, json::canonical(x), json::canonical(y));
    }
  }
  for (const auto &[name, tensor] : b.as_object())
    if (a.find(name) == nullptr) return fmt::format("spec.tensors.{}: not in the record", name);
  if (const json::Value *scalars = json::member_at(record, "spec.scalars"); scalars && scalars->is_object()) {
    for (const auto &[name, scalar] : scalars->as_object()) {
      const json::Value &other = member_or_null(shipped, fmt::format("spec.scalars.{}", name));
      if (!(scalar == other))
        return fmt::format("spec.scalars.{}: {} vs {}", name, json::canonical(scalar),
                           json::canonical(other));
    }
  }
  return {};
}

// The digests of `shipped` reduced to what a record of another harness
// states (KernelIndex's import of Liger's CSV): the operation, the axes,
// each tensor's dtype and shape, a subset of the scalars, and no
// correctness assertion. Every subset of the scalars is one candidate.
std::vector<std::string> reduced_digests(const json::Value &shipped) {
  json::Object tensors;
  for (const auto &[name, tensor] : member_or_null(shipped, "spec.tensors").as_object())
    tensors.set(name, json::Object{{"dtype", member_or_null(tensor, "dtype")},
                                   {"shape", member_or_null(tensor, "shape")}});
  std::vector<std::pair<std::string, json::Value>> scalars;
  if (const json::Value *s = json::member_at(shipped, "spec.scalars"); s && s->is_object())
    for (const auto &[name, scalar] : s->as_object()) scalars.emplace_back(name, scalar);
  std::vector<std::string> digests;
  const std::size_t subsets = std::size_t{1} << std::min<std::size_t>(scalars.size(), 16);
  for (std::size_t mask = 0; mask < subsets; ++mask) {
    json::Object spec{{"operationSpecDigest", member_or_null(shipped, "spec.operationSpecDigest")},
                      {"axes", member_or_null(shipped, "spec.axes")},
                      {"tensors", tensors}};
    json::Object kept;
    for (std::size_t k = 0; k < scalars.size() && k < 16; ++k)
      if (mask & (std::size_t{1} << k)) kept.set(scalars[k].first, scalars[k].second);
    if (!kept.empty()) spec.set("scalars", kept);
    spec.set("correctness", json::Object{{"comparator", "not_asserted"}});
    digests.push_back(manifest_digest(json::Object{
        {"apiVersion", member_or_null(shipped, "apiVersion")}, {"kind", "WorkloadCase"}, {"spec", spec}}));
  }
  return digests;
}

struct Shipped {
  fs::path file;
  json::Value manifest;
};

// The shipped WorkloadCases (workloads/, not operations/ or kernelindex/),
// in path order, the seed workload first: the case Liger's benchmark inputs
// model, so the base a derived case starts from where several could.
std::vector<Shipped> shipped_workloads() {
  std::vector<Shipped> out;
  for (const fs::path &file : list_workload_files(default_workloads_dir())) {
    json::Value manifest = json::parse_file(file, io::file_kinds::workload);
    if (json::string_at(manifest, "kind") == "WorkloadCase") out.push_back({file, std::move(manifest)});
  }
  std::stable_partition(out.begin(), out.end(),
                        [](const Shipped &s) { return s.file.filename().string().starts_with("seed-"); });
  return out;
}

std::string shown_path(const fs::path &file) {
  const fs::path relative = file.lexically_relative(default_workloads_dir().parent_path());
  return relative.empty() || relative.string().starts_with("..") ? file.string() : relative.string();
}

void use_file(ResolvedRun &out, const fs::path &file, std::string from) {
  out.workload_file = file;
  out.workload = load_workload(file);
  out.workload_from = std::move(from);
}

void resolve_workload(const OriginalRun &original, ResolvedRun &out) {
  // A WorkloadCase that is a file of its own (not a member of a file of
  // manifests, "record.json#workload") is what `kibench run` is given.
  if (original.workload && is_generatable(original.workload->manifest) && !original.workload->file.empty() &&
      original.workload->label.find('#') == std::string::npos) {
    use_file(out, original.workload->file,
             fmt::format("{}: the record's own WorkloadCase (its generators)", original.workload->label));
    return;
  }
  const std::vector<Shipped> shipped = shipped_workloads();
  if (!original.workload) {
    const std::string digest = json::string_at(original.run, "spec.workloadDigest");
    if (digest.empty()) throw InputError(fmt::format("{}: spec.workloadDigest: missing", original.label));
    for (const Shipped &s : shipped) {
      const auto digests = reduced_digests(s.manifest);
      if (std::find(digests.begin(), digests.end(), digest) != digests.end()) {
        use_file(out, s.file,
                 fmt::format("{}: spec.workloadDigest is its case's digest as the record's source states it "
                             "(tensor dtypes and shapes, scalars, no correctness assertion)",
                             shown_path(s.file)));
        return;
      }
    }
    throw InputError(
        fmt::format("{}: spec.workloadDigest: {}: the record does not hold its WorkloadCase and no "
                    "shipped workload has this digest (give the record's directory, with its "
                    "workload.json)",
                    original.label, digest));
  }
  const json::Value &record = original.workload->manifest;
  const std::string &label = original.workload->label;
  const std::string operation = json::string_at(record, "spec.operationSpecDigest");
  const fs::path operations = default_workloads_dir() / "operations";
  if (operation.empty() || !detail::find_operation(operation, {operations}))
    throw InputError(fmt::format("{}: spec.operationSpecDigest: {}: an operation kibench does not compute "
                                 "(it computes those of {})",
                                 label, operation.empty() ? std::string("missing") : operation,
                                 operations.string()));
  for (const Shipped &s : shipped) {
    if (mismatch(record, s.manifest).empty()) {
      use_file(out, s.file, fmt::format("{}: its case matches the record's {}", shown_path(s.file), label));
      return;
    }
  }
  // Derived: a shipped case of the operation, its dtypes and stated
  // scalars, at the record's axes.
  const json::Value *axes = json::member_at(record, "spec.axes");
  if (axes == nullptr || !axes->is_object()) throw InputError(fmt::format("{}: spec.axes: missing", label));
  std::vector<AxisValues> sweep;
  for (const auto &[name, value] : axes->as_object()) {
    if (std::find(std::begin(kSweepAxes), std::end(kSweepAxes), name) == std::end(kSweepAxes))
      throw InputError(
          fmt::format("{}: spec.axes.{}: kibench cannot generate a case at another {} (it derives "
                      "tokens, vocab and hidden)",
                      label, name, name));
    if (!value.is_integer() || value.as_number() < 1 || value.as_number() > 2147483647.0)
      throw InputError(fmt::format("{}: spec.axes.{}: {} is not a whole number in [1, 2^31 - 1]", label, name,
                                   json::canonical(value)));
    sweep.push_back(AxisValues{name, {value.as_int()}});
  }
  std::string closest;
  for (const Shipped &s : shipped) {
    if (json::string_at(s.manifest, "spec.operationSpecDigest") != operation) continue;
    const Workload base = load_workload(s.file);
    std::vector<Workload> derived;
    try {
      derived = expand_sweep(base, sweep);
    } catch (const InputError &e) {
      if (closest.empty()) closest = e.what();
      continue;
    }
    if (const std::string why = mismatch(record, derived.front().manifest); !why.empty()) {
      if (closest.empty()) closest = why;
      continue;
    }
    out.workload_file = s.file;
    out.axes = sweep;
    out.workload = std::move(derived.front());
    std::vector<std::string> at;
    for (const auto &a : sweep) at.push_back(fmt::format("{}={}", a.name, a.values.front()));
    out.workload_from = fmt::format("{} at {}, derived as `kibench run --axis` derives a case (no shipped "
                                    "workload has the record's case)",
                                    shown_path(s.file), fmt::join(at, " "));
    return;
  }
  throw InputError(fmt::format("{}: no shipped workload matches the record's case and none derives it: {}",
                               label, closest.empty() ? "no shipped workload of its operation" : closest));
}

} // namespace

bool is_python_lane(std::string_view name) {
  return std::find(kPythonLanes.begin(), kPythonLanes.end(), name) != kPythonLanes.end();
}

ResolvedRun resolve(const OriginalRun &original, const std::vector<ImplementationEntry> &known) {
  ResolvedRun out;
  resolve_implementation(original, known, out);
  resolve_pass(original, out);
  resolve_workload(original, out);
  return out;
}

} // namespace kibench::reproduce
