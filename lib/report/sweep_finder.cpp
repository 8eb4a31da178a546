#include "lib/report/sweep_finder.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lib/compare/report_text.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::report {
namespace {

constexpr std::string_view kSweptAxis = "tokens";

// The workload's spec without what a T sweep varies.
json::Value without_swept_parts(const json::Value &spec) {
  json::Value out = spec;
  json::Object &object = out.as_object();
  if (json::Value *axes = object.find("axes"); axes != nullptr && axes->is_object())
    axes->as_object().erase(kSweptAxis);
  if (json::Value *tensors = object.find("tensors"); tensors != nullptr && tensors->is_object()) {
    json::Object kept;
    for (const auto &[name, tensor] : tensors->as_object()) {
      json::Value edited = tensor;
      if (edited.is_object()) {
        edited.as_object().erase("shape");
        if (json::Value *data = edited.as_object().find("data"); data != nullptr && data->is_object())
          data->as_object().erase("seed");
      }
      kept.set(name, std::move(edited));
    }
    *tensors = std::move(kept);
  }
  return out;
}

struct Member {
  std::size_t run = 0;
  std::int64_t tokens = 0;
};

struct Group {
  std::string operation_digest, protocol_digest, environment_digest;
  const json::Value *workload = nullptr; // of its first member, for the fixed axes
  std::vector<Member> members;           // in the order given
};

std::string fixed_axes_of(const json::Value &workload) {
  std::vector<std::string> parts;
  if (const json::Value *axes = member_at(workload, "spec.axes"); axes != nullptr && axes->is_object()) {
    for (const auto &[name, value] : axes->as_object()) {
      if (name != kSweptAxis && value.is_integer())
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
  sweep.fixed_axes = fixed_axes_of(*group.workload);
  const json::Value *protocol = index.find(group.protocol_digest, "BenchmarkProtocol", first);
  sweep.protocol_title = protocol != nullptr ? string_at(*protocol, "metadata.title") : "";
  if (sweep.protocol_title.empty()) sweep.protocol_title = first.protocol_name;
  sweep.environment_name = first.environment_name;

  std::set<std::int64_t> tokens;
  std::map<std::string, std::map<std::int64_t, SweepPoint>> by_implementation;
  std::vector<std::string> order;
  std::size_t repeated = 0;
  for (const Member &m : group.members) {
    const RunFigures &f = figures[m.run];
    if (!f.median_ns) continue;
    if (!by_implementation.contains(f.implementation)) order.push_back(f.implementation);
    auto &points = by_implementation[f.implementation];
    if (points.contains(m.tokens)) {
      ++repeated;
      continue;
    }
    points.emplace(m.tokens, SweepPoint{m.tokens, *f.median_ns, f.median_interval, f.tflops, f.status, f.id});
    tokens.insert(m.tokens);
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
  sweep.tokens.assign(tokens.begin(), tokens.end());
  if (repeated > 0)
    sweep.notes.push_back(fmt::format("{} repeated run{} of an implementation at a T already drawn left out "
                                      "(the first given is drawn)",
                                      repeated, repeated == 1 ? "" : "s"));
  return sweep;
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
    const json::Value *tokens = member_at(*workload, "spec.axes.tokens");
    if (spec == nullptr || !spec->is_object() || tokens == nullptr || !tokens->is_integer()) continue;
    const std::string key = fmt::format("{}|{}|{}|{}", run.operation_digest, run.protocol_digest,
                                        run.environment_digest, json::canonical(without_swept_parts(*spec)));
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) {
      keys.push_back(key);
      it->second = Group{run.operation_digest, run.protocol_digest, run.environment_digest, workload, {}};
    }
    it->second.members.push_back(Member{i, tokens->as_int()});
  }

  std::vector<Sweep> sweeps;
  for (const std::string &key : keys) {
    const Group &group = groups[key];
    std::set<std::int64_t> distinct;
    for (const Member &m : group.members) distinct.insert(m.tokens);
    if (distinct.size() < 2) continue;
    Sweep sweep = describe_sweep(group, runs, figures, index);
    if (sweep.tokens.size() < 2) continue; // runs without a median draw nothing
    sweep.slug = slugs.unique(fmt::format("{}-{}", sweep.operation_name, sweep.fixed_axes));
    sweeps.push_back(std::move(sweep));
  }
  return sweeps;
}

} // namespace kibench::report
