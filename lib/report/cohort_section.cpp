#include "lib/report/cohort_section.hpp"

#include <algorithm>
#include <map>

#include "lib/compare/report_text.hpp"

namespace kibench::report {
namespace {

std::optional<double> number_in(const json::Value &object, std::string_view key) {
  const json::Value *member = object.find(key);
  if (member == nullptr || !member->is_number()) return std::nullopt;
  return member->as_number();
}

void describe_workload(const compare::ComparedRun &first, const ManifestIndex &index, CohortSection &out) {
  out.workload_name = first.workload_name;
  if (const json::Value *workload = index.find(first.workload_digest, "WorkloadCase", first)) {
    out.workload_title = string_at(*workload, "metadata.title");
    if (const json::Value *axes = member_at(*workload, "spec.axes"); axes != nullptr && axes->is_object()) {
      for (const auto &[name, value] : axes->as_object()) {
        if (value.is_integer()) out.axes.emplace_back(name, value.as_int());
      }
    }
  }
  out.comparator = string_at(first.correctness, "comparator");
  out.tolerance_relative = number_in(first.correctness, "maxRelativeError");
  out.tolerance_absolute = number_in(first.correctness, "maxAbsoluteError");
  out.protocol_name = first.protocol_name;
  if (const json::Value *protocol = index.find(first.protocol_digest, "BenchmarkProtocol", first))
    out.protocol_title = string_at(*protocol, "metadata.title");
  out.environment_digest = first.environment_digest;
  out.environment_name = first.environment_name;
}

} // namespace

CohortSection describe_cohort(const compare::CompareReport &report, const compare::Cohort &cohort,
                              const std::vector<RunFigures> &figures, const ManifestIndex &index,
                              SlugRegistry &slugs) {
  CohortSection out;
  const compare::ComparedRun &first = report.runs.at(cohort.members.front());
  describe_workload(first, index, out);
  out.slug = slugs.unique(out.workload_name);
  out.comparison_key = cohort.comparison_key;
  out.notes = cohort.notes;

  // compare numbers an implementation given more than once ("fused[2]");
  // inside a cohort where it appears once, its plain name reads better.
  std::map<std::string, std::size_t> uses;
  for (const std::size_t member : cohort.members) ++uses[report.runs[member].implementation];
  const auto shown_id = [&](std::size_t member) {
    const compare::ComparedRun &run = report.runs[member];
    return uses[run.implementation] == 1 ? run.implementation : run.id;
  };
  if (cohort.baseline) out.baseline_id = shown_id(*cohort.baseline);

  std::optional<double> floor_median;
  for (const std::size_t member : cohort.members) {
    const compare::ComparedRun &run = report.runs[member];
    if (run.implementation == kFloorImplementation && run.median_ns && *run.median_ns > 0.0) {
      floor_median = run.median_ns;
      break;
    }
  }

  // The baseline leads (everyone is read against it), the floor closes
  // (a bound, not a contender); the rest keep the order given.
  std::vector<std::size_t> order = cohort.members;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto place = [&](std::size_t member) {
      if (cohort.baseline == member) return 0;
      return report.runs[member].implementation == kFloorImplementation ? 2 : 1;
    };
    return place(a) < place(b);
  });

  for (const std::size_t member : order) {
    RunFigures f = figures.at(member);
    f.id = shown_id(member);
    f.is_floor = f.implementation == kFloorImplementation;
    const auto ranked = std::find_if(cohort.ranking.begin(), cohort.ranking.end(),
                                     [&](const compare::RankedMember &m) { return m.run == member; });
    if (ranked != cohort.ranking.end()) {
      f.rank = ranked->rank;
      f.is_baseline = ranked->is_baseline;
      if (ranked->vs_baseline) {
        f.speedup = ranked->vs_baseline->medians.speedup;
        f.verdict = std::string(compare::to_string(ranked->vs_baseline->verdict));
        f.verdict_detail = compare::text::verdict(*ranked->vs_baseline);
      }
    }
    const auto view = std::find_if(cohort.not_ranked.begin(), cohort.not_ranked.end(),
                                   [&](const compare::PairView &v) { return v.run == member; });
    if (view != cohort.not_ranked.end()) f.not_ranked_reason = compare::text::reason_codes(*view);
    if (floor_median && !f.is_floor && f.median_ns) f.ratio_to_floor = *f.median_ns / *floor_median;
    out.runs.push_back(std::move(f));
  }
  return out;
}

} // namespace kibench::report
