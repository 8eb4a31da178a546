#include "lib/compare/json_printer.hpp"

#include <string>

#include "lib/compare/regression_gate.hpp"

namespace kibench::compare {
namespace {

json::Value optional_number(const std::optional<double> &value) {
  return value ? json::Value(*value) : json::Value(nullptr);
}

json::Value interval(const stats::Interval &i) {
  return json::Object{{"estimate", i.estimate}, {"low", i.low}, {"high", i.high}};
}

json::Value differences_document(const std::vector<FieldDifference> &differences, bool environment) {
  json::Array out;
  for (const FieldDifference &d : differences) {
    json::Object entry{{"field", d.field}, {"values", json::Array{d.first, d.second}}};
    if (environment) entry.set("withinDriftRule", d.within_drift_rule);
    out.emplace_back(std::move(entry));
  }
  return out;
}

json::Value run_document(const ComparedRun &run) {
  json::Object out{
      {"id", run.id},
      {"implementation", run.implementation},
      {"name", run.name},
      {"file", run.label},
      {"digest", run.digest},
      {"status", to_string(run.status)},
      {"comparisonKey", run.comparison_key},
      {"operationDigest", run.operation_digest},
      {"workload", json::Object{{"name", run.workload_name}, {"digest", run.workload_digest}}},
      {"protocol", json::Object{{"name", run.protocol_name},
                                {"family", run.protocol_family},
                                {"digest", run.protocol_digest}}},
      {"environment", json::Object{{"name", run.environment_name}, {"digest", run.environment_digest}}},
      {"implementationDigest", run.implementation_digest},
      {"metric", run.metric},
      {"minimumEffect", run.minimum_effect},
      {"minimumEffectSource", run.minimum_effect_stated ? "protocol" : "default"},
      {"medianNs", optional_number(run.median_ns)},
      {"medianSource", run.raw ? "raw_samples" : "reported"}};
  if (run.raw) {
    out.set("rawSamples", json::Object{{"file", run.raw->file.string()},
                                       {"samples", static_cast<std::uint64_t>(run.raw->samples.size())},
                                       {"invocation", run.raw->invocation}});
  } else {
    out.set("rawSamples", nullptr);
    out.set("rawSamplesMissing", run.raw_missing);
  }
  if (!run.upstream_source.empty()) out.set("upstreamSource", run.upstream_source);
  json::Array caveats;
  for (const auto &caveat : run.caveats) caveats.emplace_back(caveat);
  out.set("caveats", std::move(caveats));
  return out;
}

json::Value comparison_document(const CompareReport &report, std::size_t baseline, const PairComparison &c) {
  return json::Object{
      {"baseline", report.runs[baseline].id},
      {"pairing", std::string(to_string(c.pairing))},
      {"pairingNote", c.pairing_note},
      {"fixedOrder", c.fixed_order},
      {"allSamplesSpeedup",
       c.all_samples_speedup ? json::Value(*c.all_samples_speedup) : json::Value(nullptr)},
      {"stateCaveat", c.state_caveat},
      {"baselineSamples", static_cast<std::uint64_t>(c.baseline_samples)},
      {"candidateSamples", static_cast<std::uint64_t>(c.candidate_samples)},
      {"baselineMedianNs", c.medians.baseline_median},
      {"candidateMedianNs", c.medians.candidate_median},
      {"differenceNs", interval(c.medians.difference)},
      {"relativeDifference",
       json::Object{{"estimate", c.relative_effect}, {"low", c.relative_low}, {"high", c.relative_high}}},
      {"speedup", interval(c.medians.speedup)},
      {"significant", c.significant()},
      {"minimumEffect", c.minimum_effect},
      {"noiseFloor", c.noise_floor},
      {"threshold", c.threshold},
      {"verdict", std::string(to_string(c.verdict))},
      {"explanation", c.explanation}};
}

json::Value view_document(const CompareReport &report, const PairView &view) {
  json::Array reasons;
  for (const Reason &reason : view.reasons) {
    json::Object entry{{"code", std::string(to_string(reason.code))}, {"detail", reason.detail}};
    if (reason.code == ReasonCode::protocol_incomparable || reason.code == ReasonCode::environment_mismatch)
      entry.set("differences",
                differences_document(reason.differences, reason.code == ReasonCode::environment_mismatch));
    reasons.emplace_back(std::move(entry));
  }
  json::Array caveats;
  for (const auto &caveat : view.caveats) caveats.emplace_back(caveat);
  return json::Object{{"run", report.runs[view.run].id},
                      {"against", report.runs[view.anchor].id},
                      {"reasons", std::move(reasons)},
                      {"profile", view.profile == ViewProfile::none
                                      ? json::Value(nullptr)
                                      : json::Value(std::string(to_string(view.profile)))},
                      {"speedup", optional_number(view.speedup)},
                      {"caveats", std::move(caveats)}};
}

json::Value cohort_document(const CompareReport &report, const Cohort &cohort) {
  json::Array members, ranking, not_ranked, notes;
  for (const std::size_t i : cohort.members) members.emplace_back(report.runs[i].id);
  for (const RankedMember &member : cohort.ranking) {
    json::Object entry{{"run", report.runs[member.run].id},
                       {"rank", static_cast<std::uint64_t>(member.rank)},
                       {"tierLeader", report.runs[member.tier_leader].id},
                       {"baseline", member.is_baseline}};
    json::Array caveats;
    for (const auto &caveat : member.caveats) caveats.emplace_back(caveat);
    entry.set("vsBaseline", member.vs_baseline
                                ? comparison_document(report, *cohort.baseline, *member.vs_baseline)
                                : json::Value(nullptr));
    entry.set("caveats", std::move(caveats));
    ranking.emplace_back(std::move(entry));
  }
  for (const PairView &view : cohort.not_ranked) not_ranked.push_back(view_document(report, view));
  for (const auto &note : cohort.notes) notes.emplace_back(note);
  return json::Object{
      {"comparisonKey", cohort.comparison_key},
      {"profile", std::string(cohort_profile(cohort))},
      {"members", std::move(members)},
      {"baseline", cohort.baseline ? json::Value(report.runs[*cohort.baseline].id) : json::Value(nullptr)},
      {"ranking", std::move(ranking)},
      {"notRanked", std::move(not_ranked)},
      {"notes", std::move(notes)},
      {"environmentDrift", differences_document(cohort.environment_drift, true)}};
}

json::Value gate_document(const CompareReport &report, const GateResult &gate) {
  json::Array regressions;
  for (const Regression &r : gate.regressions) {
    regressions.emplace_back(json::Object{
        {"candidate", report.runs[r.candidate].id},
        {"baseline", report.runs[r.baseline].id},
        {"relativeDifference",
         json::Object{{"estimate", r.relative_effect}, {"low", r.relative_low}, {"high", r.relative_high}}}});
  }
  return json::Object{{"failIfSlowerPercent", gate.percent},
                      {"checked", static_cast<std::uint64_t>(gate.checked)},
                      {"passed", gate.passed()},
                      {"regressions", std::move(regressions)},
                      {"summary", gate_summary(report, gate)}};
}

} // namespace

json::Value report_document(const CompareReport &report) {
  json::Array runs, cohorts, not_comparable;
  for (const auto &run : report.runs) runs.push_back(run_document(run));
  for (const auto &cohort : report.cohorts) cohorts.push_back(cohort_document(report, cohort));
  for (const auto &view : report.not_comparable) not_comparable.push_back(view_document(report, view));
  return json::Object{
      {"format", std::string(kCompareFormat)},
      {"settings", json::Object{{"confidence", report.bootstrap.confidence},
                                {"resamples", static_cast<std::uint64_t>(report.bootstrap.resamples)},
                                {"seed", static_cast<std::uint64_t>(report.bootstrap.seed)}}},
      {"baseline", json::Object{{"run", report.runs[report.anchor].id}, {"chosenBy", report.anchor_choice}}},
      {"runs", std::move(runs)},
      {"cohorts", std::move(cohorts)},
      {"notComparable", std::move(not_comparable)},
      {"gate", report.gate ? gate_document(report, *report.gate) : json::Value(nullptr)}};
}

} // namespace kibench::compare
