#include "lib/compare/compare.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "lib/compare/environment_drift.hpp"
#include "lib/compare/ranking.hpp"
#include "lib/error.hpp"

namespace kibench::compare {
namespace {

namespace fs = std::filesystem;

// The implementation names that make a run the default baseline, in order
// of preference: the torch-equivalent GPU reference, then its CPU twin.
constexpr std::string_view kDefaultBaselineNames[] = {"reference", "cpu-reference"};

// Among `candidates` (indices in the order given): the first "reference",
// else the first "cpu-reference", else the first.
std::size_t preferred(const std::vector<ComparedRun> &runs, const std::vector<std::size_t> &candidates) {
  for (const std::string_view name : kDefaultBaselineNames) {
    for (const std::size_t i : candidates) {
      if (runs[i].implementation == name) return i;
    }
  }
  return candidates.front();
}

fs::path identity(const fs::path &path) {
  std::error_code ignored;
  fs::path canonical = fs::weakly_canonical(path, ignored);
  return canonical.empty() ? fs::absolute(path).lexically_normal() : canonical;
}

std::string list_ids(const std::vector<ComparedRun> &runs) {
  std::vector<std::string> ids;
  for (const auto &run : runs) ids.push_back(run.id);
  return fmt::format("{}", fmt::join(ids, ", "));
}

class CohortBuilder {
public:
  CohortBuilder(const std::vector<ComparedRun> &runs, const stats::BootstrapSettings &settings)
      : runs_(runs), settings_(settings) {}

  Cohort build(std::string key, std::vector<std::size_t> members, std::size_t anchor) {
    Cohort cohort;
    cohort.comparison_key = std::move(key);
    cohort.members = std::move(members);
    std::vector<std::size_t> rankable;
    for (const std::size_t i : cohort.members) {
      if (runs_[i].rankable()) rankable.push_back(i);
    }
    const bool holds_anchor =
        std::find(cohort.members.begin(), cohort.members.end(), anchor) != cohort.members.end();
    if (!rankable.empty()) {
      cohort.baseline = holds_anchor && runs_[anchor].rankable() ? anchor : preferred(runs_, rankable);
      cohort.reference = *cohort.baseline;
      if (holds_anchor && *cohort.baseline != anchor) {
        cohort.notes.push_back(
            fmt::format("the baseline {} cannot anchor a ranking ({}); {} is this cohort's "
                        "baseline",
                        runs_[anchor].id,
                        runs_[anchor].status != RunStatus::passed
                            ? fmt::format("status {}", to_string(runs_[anchor].status))
                            : runs_[anchor].raw_missing,
                        runs_[*cohort.baseline].id));
      }
    } else {
      cohort.reference = holds_anchor ? anchor : preferred(runs_, cohort.members);
      cohort.notes.push_back("no member is rankable (each needs status passed and raw samples): no ranking");
    }

    const auto baseline = cohort.baseline;
    // A pair that includes the baseline is judged by its comparison with
    // the baseline, in the baseline's orientation, so that a rank never
    // contradicts the verdict printed beside it.
    const auto slower = [&](std::size_t leader, std::size_t member) {
      if (member == baseline) return pair(*baseline, leader).verdict == Verdict::faster;
      if (leader == baseline) return pair(*baseline, member).verdict == Verdict::slower;
      return pair(leader, member).verdict == Verdict::slower;
    };
    for (const RankEntry &entry : rank_members(runs_, rankable, slower)) {
      RankedMember member;
      member.run = entry.run;
      member.rank = entry.rank;
      member.tier_leader = entry.tier_leader;
      member.is_baseline = entry.run == *cohort.baseline;
      if (!member.is_baseline) member.vs_baseline = pair(*cohort.baseline, entry.run);
      cohort.ranking.push_back(std::move(member));
    }
    for (const std::size_t i : cohort.members) {
      if (!runs_[i].rankable()) cohort.not_ranked.push_back(view_pair(runs_, cohort.reference, i));
    }
    return cohort;
  }

private:
  // Each ordered pair is bootstrapped once (ranking and baseline
  // comparisons often ask for the same one).
  PairComparison pair(std::size_t baseline, std::size_t candidate) {
    const auto key = std::make_pair(baseline, candidate);
    auto found = cache_.find(key);
    if (found == cache_.end())
      found = cache_.emplace(key, compare_pair(runs_[baseline], runs_[candidate], settings_)).first;
    return found->second;
  }

  const std::vector<ComparedRun> &runs_;
  const stats::BootstrapSettings &settings_;
  std::map<std::pair<std::size_t, std::size_t>, PairComparison> cache_;
};

// Every field the environments of the cohort's members differ in, against
// the environment of its first member (each difference once).
std::vector<FieldDifference> drift_of(const std::vector<std::size_t> &members,
                                      const std::vector<ComparedRun> &runs) {
  std::vector<FieldDifference> out;
  const ComparedRun &first = runs[members.front()];
  std::vector<std::string> seen{first.environment_digest};
  for (const std::size_t i : members) {
    if (std::find(seen.begin(), seen.end(), runs[i].environment_digest) != seen.end()) continue;
    seen.push_back(runs[i].environment_digest);
    for (FieldDifference &difference : environment_differences(first.environment, runs[i].environment)) {
      const bool listed = std::any_of(out.begin(), out.end(), [&](const FieldDifference &d) {
        return d.field == difference.field && d.first == difference.first && d.second == difference.second;
      });
      if (!listed) out.push_back(std::move(difference));
    }
  }
  return out;
}

// Members timed beside other lanes than the baseline was: on a CPU a
// neighbour moves a median (docs/protocol.md), on a GPU its power does.
void mark_lane_set_differences(Cohort &cohort, const std::vector<ComparedRun> &runs) {
  if (!cohort.baseline) return;
  const ComparedRun &baseline = runs[*cohort.baseline];
  if (baseline.timed_with.empty()) return;
  for (RankedMember &member : cohort.ranking) {
    const ComparedRun &run = runs[member.run];
    if (member.is_baseline || run.timed_with.empty() || run.timed_with == baseline.timed_with) continue;
    member.caveats.push_back(fmt::format("timed beside other lanes than the baseline (this run: {}; the "
                                         "baseline: {}): neighbours move medians, on a CPU most",
                                         run.timed_with, baseline.timed_with));
  }
}

// A cohort ranked across environments: the difference, as a note on the
// cohort and a caveat on each of its verdicts.
void mark_environment_drift(Cohort &cohort, const std::vector<ComparedRun> &runs) {
  cohort.environment_drift = drift_of(cohort.members, runs);
  const std::string differences = join(cohort.environment_drift);
  cohort.notes.push_back(
      fmt::format("ranked across environments that differ only where the environment drift rule tolerates it "
                  "(--allow-environment-drift, {}): {}; KernelIndex ranks only runs of one environment",
                  kEnvironmentDriftRule, differences));
  if (!cohort.baseline) return;
  const ComparedRun &baseline = runs[*cohort.baseline];
  for (RankedMember &member : cohort.ranking) {
    const ComparedRun &run = runs[member.run];
    if (member.is_baseline || run.environment_digest == baseline.environment_digest) {
      member.caveats.push_back(fmt::format(
          "{}; the cohort's environments differ in {} (--allow-environment-drift)",
          member.is_baseline ? "the baseline" : "measured in the baseline's environment", differences));
    } else {
      member.caveats.push_back(
          fmt::format("measured in another environment than the baseline, within the environment drift "
                      "rule (--allow-environment-drift): {}",
                      join(environment_differences(baseline.environment, run.environment))));
    }
  }
}

} // namespace

std::string_view cohort_profile(const Cohort &cohort) {
  if (cohort.ranking.empty()) return "reported";
  return cohort.environment_drift.empty() ? "strict_exact" : "environment_drift";
}

const Cohort &CompareReport::cohort_of(std::size_t run) const {
  for (const Cohort &cohort : cohorts) {
    if (std::find(cohort.members.begin(), cohort.members.end(), run) != cohort.members.end()) return cohort;
  }
  throw std::out_of_range("CompareReport::cohort_of: run in no cohort");
}

std::vector<std::size_t> select_runs(const std::vector<ComparedRun> &runs, std::string_view selector) {
  std::vector<std::size_t> out;
  const bool digest_prefix =
      selector.starts_with("sha256:") && selector.size() >= std::string_view("sha256:").size() + 8;
  std::error_code error;
  const bool is_path = fs::exists(fs::path(selector), error);
  const fs::path wanted = is_path ? identity(fs::path(selector)) : fs::path{};
  const bool is_directory = is_path && fs::is_directory(wanted, error);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ComparedRun &run = runs[i];
    bool match = run.id == selector || run.implementation == selector || run.name == selector ||
                 (digest_prefix && run.digest.starts_with(selector));
    if (!match && is_path) {
      const fs::path file = identity(run.file);
      match = is_directory ? file.parent_path() == wanted : file == wanted;
    }
    if (match) out.push_back(i);
  }
  return out;
}

CompareReport compare_runs(std::vector<ComparedRun> runs, const CompareOptions &options) {
  if (runs.empty()) throw InputError("compare: no run to compare");
  CompareReport report;
  report.runs = std::move(runs);
  report.bootstrap = options.bootstrap;

  std::vector<std::size_t> everyone(report.runs.size());
  for (std::size_t i = 0; i < everyone.size(); ++i) everyone[i] = i;
  if (options.baseline) {
    const auto matches = select_runs(report.runs, *options.baseline);
    if (matches.empty())
      throw InputError(fmt::format("--baseline {}: names none of the runs given ({})", *options.baseline,
                                   list_ids(report.runs)));
    report.anchor = preferred(report.runs, matches);
    report.anchor_choice = matches.size() == 1 ? fmt::format("--baseline {}", *options.baseline)
                                               : fmt::format("--baseline {} (names {} runs; the first given)",
                                                             *options.baseline, matches.size());
  } else {
    report.anchor = preferred(report.runs, everyone);
    const std::string &name = report.runs[report.anchor].implementation;
    const bool by_name = std::find(std::begin(kDefaultBaselineNames), std::end(kDefaultBaselineNames),
                                   name) != std::end(kDefaultBaselineNames);
    report.anchor_choice = by_name ? fmt::format("the run named {}", name) : "the first run given";
  }

  // Cohorts in the order their first member was given, by comparison key
  // (or, with environment drift allowed, by the key with the environment's
  // drift equivalence key in place of its digest).
  const auto cohort_key = [&](std::size_t i) -> const std::string & {
    return options.allow_environment_drift ? report.runs[i].drift_comparison_key
                                           : report.runs[i].comparison_key;
  };
  std::vector<std::string> keys;
  std::map<std::string, std::vector<std::size_t>> members;
  for (const std::size_t i : everyone) {
    const std::string &key = cohort_key(i);
    if (!members.contains(key)) keys.push_back(key);
    members[key].push_back(i);
  }
  CohortBuilder builder(report.runs, report.bootstrap);
  for (const auto &key : keys) {
    const std::vector<std::size_t> &cohort = members[key];
    const bool one_key = std::all_of(cohort.begin(), cohort.end(), [&](std::size_t i) {
      return report.runs[i].comparison_key == report.runs[cohort.front()].comparison_key;
    });
    // A cohort of one environment keeps its strict key, drift allowed or not.
    report.cohorts.push_back(
        builder.build(one_key ? report.runs[cohort.front()].comparison_key : key, cohort, report.anchor));
    if (!one_key) mark_environment_drift(report.cohorts.back(), report.runs);
    mark_lane_set_differences(report.cohorts.back(), report.runs);
  }

  const std::string &anchor_key = cohort_key(report.anchor);
  for (const std::size_t i : everyone) {
    if (cohort_key(i) != anchor_key)
      report.not_comparable.push_back(view_pair(report.runs, report.anchor, i));
  }
  if (options.fail_if_slower_percent) report.gate = evaluate_gate(report, *options.fail_if_slower_percent);
  return report;
}

} // namespace kibench::compare
