#include "lib/merge/merge.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/run/shard.hpp"

namespace kibench::merge {
namespace {

namespace fs = std::filesystem;

// One run directory of a shard, as its files say.
struct ShardRun {
  fs::path directory;
  std::string run_set_digest; // metadata.labels.run_set
  std::size_t point = 0;      // run_set_point "i of P"
  std::size_t point_count = 0;
  std::string shard;          // "K/N (from SOURCE)"
  std::string workload_digest;
};

std::string shown(const fs::path &path) {
  return io::printable(path.string());
}

bool is_run_directory(const fs::path &dir) {
  return fs::is_regular_file(dir / "workload.json") && fs::is_regular_file(dir / "summary.json");
}

ShardRun read_shard_run(const fs::path &dir) {
  std::vector<fs::path> runs;
  for (const auto &entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with("run.") && name.ends_with(".json")) runs.push_back(entry.path());
  }
  std::sort(runs.begin(), runs.end());
  if (runs.empty()) throw InputError(fmt::format("{}: no run.*.json: not a timed run directory", shown(dir)));
  const json::Value run = json::parse_file(runs.front());
  ShardRun out;
  out.directory = dir;
  out.run_set_digest = string_at(run, "metadata.labels.run_set");
  const std::string point = string_at(run, "metadata.labels.run_set_point");
  if (out.run_set_digest.empty() || point.empty())
    throw InputError(fmt::format("{}: $.metadata.labels: no run_set: this run was not made as a shard "
                                 "(kibench run --shard K/N)",
                                 shown(runs.front())));
  const auto label = parse_point_label(point);
  if (!label)
    throw InputError(
        fmt::format("{}: $.metadata.labels.run_set_point: {:?} is not \"I of P\"", shown(runs.front()), point));
  std::tie(out.point, out.point_count) = *label;
  out.shard = fmt::format("{} (from {})", string_at(run, "metadata.labels.shard"),
                          string_at(run, "metadata.labels.shard_source"));
  out.workload_digest = manifest_digest(json::parse_file(dir / "workload.json"));
  return out;
}

// Two long texts by where they part: "…at most 3 samples…" vs "…at most 4 samples…".
std::string parting(const std::string &a, const std::string &b) {
  constexpr std::size_t kContext = 30;
  if (a.size() <= 2 * kContext && b.size() <= 2 * kContext) return fmt::format("{} vs {}", a, b);
  std::size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const std::size_t from = at > kContext ? at - kContext : 0;
  const auto cut = [&](const std::string &text) {
    return fmt::format("{}{}{}", from > 0 ? "…" : "", text.substr(from, 2 * kContext),
                       from + 2 * kContext < text.size() ? "…" : "");
  };
  return fmt::format("{} vs {}", cut(a), cut(b));
}

// The first field where two run sets differ, in words.
std::string difference(const json::Value &a, const json::Value &b) {
  if (string_at(a, "kibench") != string_at(b, "kibench"))
    return fmt::format("kibench {} vs {}", string_at(a, "kibench"), string_at(b, "kibench"));
  const json::Value *settings_a = member_at(a, "settings");
  const json::Value *settings_b = member_at(b, "settings");
  if (settings_a != nullptr && settings_b != nullptr && settings_a->is_object() && settings_b->is_object()) {
    for (const auto &[key, value] : settings_a->as_object()) {
      const json::Value *other = settings_b->find(key);
      if (other == nullptr || json::canonical(value) != json::canonical(*other))
        return fmt::format("settings.{}: {}", key,
                           parting(json::canonical(value), other == nullptr ? "(absent)" : json::canonical(*other)));
    }
  }
  const json::Value *impl_a = member_at(a, "implementations");
  const json::Value *impl_b = member_at(b, "implementations");
  if (impl_a != nullptr && impl_b != nullptr && json::canonical(*impl_a) != json::canonical(*impl_b))
    return fmt::format("implementations: {} vs {}", json::canonical(*impl_a), json::canonical(*impl_b));
  const json::Value *points_a = member_at(a, "points");
  const json::Value *points_b = member_at(b, "points");
  if (points_a != nullptr && points_b != nullptr && points_a->is_array() && points_b->is_array()) {
    const auto &pa = points_a->as_array();
    const auto &pb = points_b->as_array();
    if (pa.size() != pb.size()) return fmt::format("points: {} vs {}", pa.size(), pb.size());
    for (std::size_t i = 0; i < pa.size(); ++i)
      if (json::canonical(pa[i]) != json::canonical(pb[i]))
        return fmt::format("point {}: {} vs {}", i, string_at(pa[i], "workload"), string_at(pb[i], "workload"));
  }
  return "the run set documents differ";
}

} // namespace

MergePlan plan_merge(const std::vector<fs::path> &paths) {
  if (paths.empty()) throw InputError("merge: no shard folders given");
  std::vector<ShardRun> runs;
  // Run sets by digest, read from the folders the run directories are in.
  std::map<std::string, std::pair<json::Value, fs::path>> run_sets;
  std::set<fs::path> folders;
  for (const fs::path &given : paths) {
    // "dir/" names dir: its last component is what is copied.
    fs::path path = given.lexically_normal();
    if (path.filename().empty()) path = path.parent_path();
    if (!fs::is_directory(path)) throw InputError(fmt::format("{}: not a folder", shown(given)));
    if (is_run_directory(path)) {
      runs.push_back(read_shard_run(path));
      folders.insert(path.parent_path().empty() ? fs::path(".") : path.parent_path());
      continue;
    }
    std::vector<fs::path> inside;
    for (const auto &entry : fs::directory_iterator(path))
      if (entry.is_directory() && is_run_directory(entry.path())) inside.push_back(entry.path());
    std::sort(inside.begin(), inside.end());
    if (inside.empty()) throw InputError(fmt::format("{}: no run directories in it", shown(path)));
    for (const fs::path &dir : inside) runs.push_back(read_shard_run(dir));
    folders.insert(path);
  }
  for (const fs::path &folder : folders)
    for (const auto &entry : fs::directory_iterator(folder)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !name.starts_with("run-set.") || !name.ends_with(".json")) continue;
      json::Value document = json::parse_file(entry.path());
      const std::string digest = canonical_digest(document);
      run_sets.emplace(digest, std::make_pair(std::move(document), entry.path()));
    }

  MergePlan plan;
  plan.run_set_digest = runs.front().run_set_digest;
  for (const ShardRun &run : runs) {
    if (!run_sets.contains(run.run_set_digest))
      throw InputError(fmt::format("{}: its run set {} is not beside it ({} not found in the folders given)",
                                   shown(run.directory), run.run_set_digest, run_set_file_name(run.run_set_digest)));
    if (run.run_set_digest != plan.run_set_digest) {
      const json::Value &first = run_sets.at(plan.run_set_digest).first;
      const json::Value &other = run_sets.at(run.run_set_digest).first;
      throw InputError(fmt::format("{} and {} are shards of different runs: {}", shown(runs.front().directory),
                                   shown(run.directory), difference(first, other)));
    }
  }
  plan.run_set = run_sets.at(plan.run_set_digest).first;
  const json::Value *points = member_at(plan.run_set, "points");
  if (points == nullptr || !points->is_array())
    throw InputError(fmt::format("{}: $.points: not a list", shown(run_sets.at(plan.run_set_digest).second)));
  const auto &list = points->as_array();

  std::map<std::size_t, std::vector<const ShardRun *>> by_point;
  std::set<std::string> shards;
  for (const ShardRun &run : runs) {
    if (run.point_count != list.size() || run.point >= list.size())
      throw InputError(fmt::format("{}: point {} of {}, but its run set has {} points", shown(run.directory),
                                   run.point, run.point_count, list.size()));
    if (string_at(list[run.point], "workloadDigest") != run.workload_digest)
      throw InputError(fmt::format("{}: workload.json's digest {} is not point {}'s ({})", shown(run.directory),
                                   run.workload_digest, run.point, string_at(list[run.point], "workloadDigest")));
    by_point[run.point].push_back(&run);
    shards.insert(run.shard);
  }
  plan.shards.assign(shards.begin(), shards.end());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string name = string_at(list[i], "workload");
    const auto found = by_point.find(i);
    if (found == by_point.end()) {
      plan.missing.push_back(fmt::format("point {} of {} ({})", i, list.size(), name));
      continue;
    }
    if (found->second.size() > 1) {
      std::vector<std::string> dirs;
      for (const ShardRun *run : found->second) dirs.push_back(shown(run->directory));
      plan.doubled.push_back(fmt::format("point {} of {} ({}): {}", i, list.size(), name, fmt::join(dirs, ", ")));
      continue;
    }
    plan.points.push_back({i, name, found->second.front()->directory});
  }
  return plan;
}

void write_merge(const MergePlan &plan, const fs::path &out) {
  if (!plan.complete()) throw std::logic_error("write_merge: the plan has missing or doubled points");
  io::StagedDirectory dir(out, io::StagedDirectory::IfTaken::fail);
  for (const MergedPoint &point : plan.points) {
    // Two machines may start a workload in the same millisecond: the
    // second name gets "-2", as `kibench run` does.
    const std::string name = point.run_directory.filename().string();
    fs::path target = dir.staging_path() / name;
    for (int n = 2; fs::exists(target); ++n) target = dir.staging_path() / fmt::format("{}-{}", name, n);
    fs::copy(point.run_directory, target, fs::copy_options::recursive);
  }
  dir.write(run_set_file_name(plan.run_set_digest), json::canonical(plan.run_set) + "\n");
  dir.commit();
}

} // namespace kibench::merge
