#include "lib/report/sweep_finder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lib/compare/report_text.hpp"
#include "lib/json/canonical.hpp"
#include "lib/workload/operation_signature.hpp"

namespace kibench::report {
namespace {

// Whether `bound` is 1/sqrt(n) for a whole n: nn.Linear's default init
// bound for fan-in n, which a workload derived at another shape changes.
bool is_inverse_sqrt_of_integer(double bound) {
  if (!(bound > 0.0)) return false;
  const double n = std::round(1.0 / (bound * bound));
  return n >= 1.0 && std::fabs(1.0 / std::sqrt(n) - bound) <= 1e-12 * bound;
}

// Whole numbers among generator parameters, by "tensor.parameter": a
// range bound such as the target's [0, vocab) may follow the swept axis.
using IntegerParameters = std::map<std::string, std::int64_t>;

// A generator's parameters as sweeps compare them: a symmetric range
// ±1/sqrt(n) (nn.Linear's init, whose fan-in follows the shape) named
// rather than valued, and whole numbers set aside into `integers` (sweep
// groups then decide whether each follows the swept axis or stays fixed).
json::Value comparable_parameters(const json::Value &parameters, const std::string &tensor,
                                  IntegerParameters &integers) {
  if (!parameters.is_object()) return parameters;
  json::Object out;
  const json::Value *low = parameters.find("low");
  const json::Value *high = parameters.find("high");
  const bool init_bound = low != nullptr && high != nullptr && low->is_number() && high->is_number() &&
                          low->as_number() == -high->as_number() &&
                          is_inverse_sqrt_of_integer(high->as_number());
  for (const auto &[key, value] : parameters.as_object()) {
    if (init_bound && (key == "low" || key == "high")) {
      out.set(key, key == "low" ? "-1/sqrt(fan_in)" : "1/sqrt(fan_in)");
    } else if (value.is_integer()) {
      integers[fmt::format("{}.{}", tensor, key)] = value.as_int();
      out.set(key, "integer");
    } else {
      out.set(key, value);
    }
  }
  return out;
}

// The workload's spec as a sweep over `axis` compares it: without that
// axis and those derived from it, and without what follows from the axes
// (tensor shapes, generator seeds, comparable_parameters).
json::Value without_swept_parts(const json::Value &spec, const std::string &axis,
                                const std::vector<std::string> &derived, IntegerParameters &integers) {
  json::Value out = spec;
  json::Object &object = out.as_object();
  if (json::Value *axes = object.find("axes"); axes != nullptr && axes->is_object()) {
    axes->as_object().erase(axis);
    for (const std::string &name : derived) axes->as_object().erase(name);
  }
  if (json::Value *tensors = object.find("tensors"); tensors != nullptr && tensors->is_object()) {
    json::Object kept;
    for (const auto &[name, tensor] : tensors->as_object()) {
      json::Value edited = tensor;
      if (edited.is_object()) {
        edited.as_object().erase("shape");
        if (json::Value *data = edited.as_object().find("data"); data != nullptr && data->is_object()) {
          data->as_object().erase("seed");
          if (json::Value *parameters = data->as_object().find("parameters"))
            *parameters = comparable_parameters(*parameters, name, integers);
        }
      }
      kept.set(name, std::move(edited));
    }
    *tensors = std::move(kept);
  }
  return out;
}

// The axes the operation derives from `axis` ("student_hidden" from
// "hidden"), which a sweep over it varies too.
std::vector<std::string> derived_from(const json::Value *operation, const std::string &axis) {
  std::vector<std::string> out;
  if (operation == nullptr) return out;
  try {
    const auto signature = detail::OperationSignature::read(*operation, "OperationSpec");
    for (const detail::AxisRule &rule : signature.axes())
      if (rule.source_axis == axis) out.push_back(rule.name);
  } catch (const std::exception &) {
    // An operation kibench cannot read derives nothing it knows of.
  }
  return out;
}

struct Member {
  std::size_t run = 0;
  std::int64_t value = 0; // of the swept axis
  IntegerParameters integers;
};

struct Group {
  std::string axis;
  std::string operation_digest, protocol_digest, environment_digest;
  const json::Value *workload = nullptr; // of its first member, for the fixed axes
  std::vector<std::string> derived;      // axes derived from the swept one, not shown as fixed
  std::vector<Member> members;           // in the order given
};

std::string fixed_axes_of(const json::Value &workload, const Group &group) {
  std::vector<std::string> parts;
  if (const json::Value *axes = member_at(workload, "spec.axes"); axes != nullptr && axes->is_object()) {
    for (const auto &[name, value] : axes->as_object()) {
      if (name != group.axis && value.is_integer() &&
          std::find(group.derived.begin(), group.derived.end(), name) == group.derived.end())
        parts.push_back(fmt::format("{} {}", name, value.as_int()));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

Sweep describe_sweep(const Group &group, const std::vector<compare::ComparedRun> &runs,
                     const std::vector<RunFigures> &figures, const ManifestIndex &index) {
  Sweep sweep;
  const compare::ComparedRun &first = runs[group.members.front().run];
  const json::Value *operation = index.find(group.operation_digest, "OperationSpec", first);
  sweep.operation_name = operation != nullptr ? string_at(*operation, "metadata.name") : "";
  if (sweep.operation_name.empty())
    sweep.operation_name = compare::text::short_digest(group.operation_digest);
  sweep.axis = group.axis;
  sweep.fixed_axes = fixed_axes_of(*group.workload, group);
  const json::Value *protocol = index.find(group.protocol_digest, "BenchmarkProtocol", first);
  sweep.protocol_title = protocol != nullptr ? string_at(*protocol, "metadata.title") : "";
  if (sweep.protocol_title.empty()) sweep.protocol_title = first.protocol_name;
  sweep.environment_name = first.environment_name;

  std::set<std::int64_t> values;
  std::map<std::string, std::map<std::int64_t, SweepPoint>> by_implementation;
  std::vector<std::string> order;
  std::size_t repeated = 0;
  for (const Member &m : group.members) {
    const RunFigures &f = figures[m.run];
    if (!f.median_ns) continue;
    if (!by_implementation.contains(f.implementation)) order.push_back(f.implementation);
    auto &points = by_implementation[f.implementation];
    if (points.contains(m.value)) {
      ++repeated;
      continue;
    }
    points.emplace(m.value, SweepPoint{m.value, *f.median_ns, f.median_interval, f.tflops, f.status, f.id});
    values.insert(m.value);
  }
  // As in a cohort: the baselines lead, the floor closes, the rest keep
  // the order given.
  const auto place = [](const std::string &implementation) {
    if (implementation == "reference") return 0;
    if (implementation == "cpu-reference") return 1;
    return implementation == "cublas-floor" ? 3 : 2;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string &a, const std::string &b) { return place(a) < place(b); });
  for (const std::string &implementation : order) {
    SweepSeries series{implementation, {}};
    for (auto &[t, point] : by_implementation[implementation]) series.points.push_back(point);
    sweep.series.push_back(std::move(series));
  }
  sweep.values.assign(values.begin(), values.end());
  if (repeated > 0)
    sweep.notes.push_back(fmt::format("{} repeated run{} of an implementation at a {} already drawn left out "
                                      "(the first given is drawn)",
                                      repeated, repeated == 1 ? "" : "s", sweep.axis));
  return sweep;
}

// A group's members whose whole-number parameters agree: each either
// follows the swept axis in every member (the target's range over a V
// sweep) or is compared as it is. A parameter that equals the axis in only
// some members (T = V = 1000 in a T sweep) is compared as it is.
std::vector<Group> split_by_integer_parameters(const Group &group) {
  std::set<std::string> follows;
  for (const auto &[name, ignored] : group.members.front().integers) {
    const bool all = std::all_of(group.members.begin(), group.members.end(), [&](const Member &m) {
      const auto it = m.integers.find(name);
      return it != m.integers.end() && it->second == m.value;
    });
    if (all) follows.insert(name);
  }
  std::vector<std::string> order;
  std::map<std::string, Group> parts;
  for (const Member &m : group.members) {
    std::string signature;
    for (const auto &[name, value] : m.integers)
      signature +=
          follows.contains(name) ? fmt::format("{}=axis;", name) : fmt::format("{}={};", name, value);
    auto [it, inserted] = parts.try_emplace(signature, group);
    if (inserted) {
      it->second.members.clear();
      order.push_back(signature);
    }
    it->second.members.push_back(m);
  }
  std::vector<Group> out;
  for (const std::string &signature : order) out.push_back(std::move(parts.at(signature)));
  return out;
}

} // namespace

std::vector<Sweep> find_sweeps(const std::vector<compare::ComparedRun> &runs,
                               const std::vector<RunFigures> &figures, const ManifestIndex &index,
                               SlugRegistry &slugs) {
  std::vector<std::string> keys; // in the order first seen
  std::map<std::string, Group> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const compare::ComparedRun &run = runs[i];
    const json::Value *workload = index.find(run.workload_digest, "WorkloadCase", run);
    if (workload == nullptr) continue;
    const json::Value *spec = workload->find("spec");
    const json::Value *axes = member_at(*workload, "spec.axes");
    if (spec == nullptr || !spec->is_object() || axes == nullptr || !axes->is_object()) continue;
    const json::Value *operation = index.find(run.operation_digest, "OperationSpec", run);
    // One candidate sweep per axis the workload sets: over T, over V, ...
    for (const auto &[axis, value] : axes->as_object()) {
      if (!value.is_integer()) continue;
      const std::vector<std::string> derived = derived_from(operation, axis);
      IntegerParameters integers;
      const std::string key = fmt::format(
          "{}|{}|{}|{}|{}", axis, run.operation_digest, run.protocol_digest, run.environment_digest,
          json::canonical(without_swept_parts(*spec, axis, derived, integers)));
      auto [it, inserted] = groups.try_emplace(key);
      if (inserted) {
        keys.push_back(key);
        it->second = Group{
            axis, run.operation_digest, run.protocol_digest, run.environment_digest, workload, derived, {}};
      }
      it->second.members.push_back(Member{i, value.as_int(), std::move(integers)});
    }
  }

  std::vector<Sweep> sweeps;
  for (const std::string &key : keys)
    for (const Group &group : split_by_integer_parameters(groups[key])) {
      std::set<std::int64_t> distinct;
      for (const Member &m : group.members) distinct.insert(m.value);
      if (distinct.size() < kMinSweepValues) continue;
      Sweep sweep = describe_sweep(group, runs, figures, index);
      if (sweep.values.size() < kMinSweepValues) continue; // runs without a median draw nothing
      sweep.slug =
          slugs.unique(sweep.axis == "tokens"
                           ? fmt::format("{}-{}", sweep.operation_name, sweep.fixed_axes)
                           : fmt::format("{}-{}-{}", sweep.operation_name, sweep.axis, sweep.fixed_axes));
      sweeps.push_back(std::move(sweep));
    }
  return sweeps;
}

} // namespace kibench::report
