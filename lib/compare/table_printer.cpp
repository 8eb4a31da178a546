#include "lib/compare/table_printer.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "lib/compare/regression_gate.hpp"
#include "lib/compare/report_text.hpp"
#include "lib/compare/text_table.hpp"

namespace kibench::compare {
namespace {

void render_views(std::string &out, const CompareReport &report, const std::vector<PairView> &views,
                  const std::string &indent) {
  for (const PairView &view : views) {
    const ComparedRun &run = report.runs[view.run];
    out += fmt::format("{}{}  {}  median {}\n", indent, run.id, text::reason_codes(view), text::median(run));
    for (const Reason &reason : view.reasons) out += fmt::format("{}    {}\n", indent, reason.detail);
    out += fmt::format("{}    {}\n", indent, text::view_summary(view, report));
    for (const auto &caveat : view.caveats) out += fmt::format("{}    caveat: {}\n", indent, caveat);
  }
}

void render_cohort(std::string &out, const CompareReport &report, const Cohort &cohort, std::size_t number) {
  const ComparedRun &first = report.runs[cohort.reference];
  out += fmt::format("\ncohort {} of {} · {} · comparison key {}\n", number, report.cohorts.size(),
                     text::cohort_profile(cohort), text::short_digest(cohort.comparison_key));
  out += fmt::format("  workload {} · protocol {} · environment {}\n", first.workload_name,
                     first.protocol_name, first.environment_name);
  out += fmt::format("  minimum effect {}\n", text::minimum_effect(first));
  for (const auto &note : cohort.notes) out += fmt::format("  note: {}\n", note);

  if (!cohort.ranking.empty()) {
    out += "\n";
    using Align = TextTable::Align;
    TextTable table(
        {"rank", "run", "median", "n", "vs baseline [95 % CI]", "speedup [95 % CI]", "pairing", "verdict"},
        {Align::right, Align::left, Align::right, Align::right, Align::left, Align::left, Align::left,
         Align::left});
    for (const RankedMember &member : cohort.ranking) {
      const ComparedRun &run = report.runs[member.run];
      if (member.is_baseline) {
        table.add_row({fmt::format("{}", member.rank), run.id + " (baseline)", text::median(run),
                       text::sample_count(run), "—", "—", "—", "baseline"});
        continue;
      }
      const PairComparison &c = *member.vs_baseline;
      table.add_row({fmt::format("{}", member.rank), run.id, text::median(run), text::sample_count(run),
                     text::relative_difference(c), text::speedup(c), text::pairing(c),
                     std::string(to_string(c.verdict))});
    }
    out += table.render("  ");
    out += "\n";
    for (const RankedMember &member : cohort.ranking) {
      const std::string &id = report.runs[member.run].id;
      if (member.vs_baseline) {
        out += fmt::format("  {}: {}\n", id, text::verdict(*member.vs_baseline));
        if (!member.vs_baseline->state_caveat.empty())
          out += fmt::format("  {}: caveat: {}\n", id, member.vs_baseline->state_caveat);
      }
      for (const auto &caveat : member.caveats) out += fmt::format("  {}: caveat: {}\n", id, caveat);
    }
  }
  if (!cohort.not_ranked.empty()) {
    out += fmt::format("\n  not ranked (described against {}):\n", report.runs[cohort.reference].id);
    render_views(out, report, cohort.not_ranked, "    ");
  }
  for (const std::size_t i : cohort.members) {
    for (const auto &caveat : report.runs[i].caveats)
      out += fmt::format("  caveat: {}: {}\n", report.runs[i].id, caveat);
  }
}

// The part of every workload name that tells them apart: the longest common
// prefix and suffix (cut at '-') removed.
std::vector<std::string> distinct_names(const std::vector<std::string> &names) {
  if (names.size() < 2) return names;
  std::size_t prefix = names.front().size(), suffix = names.front().size();
  for (const std::string &n : names) {
    std::size_t p = 0;
    while (p < prefix && p < n.size() && n[p] == names.front()[p]) ++p;
    prefix = p;
    std::size_t s = 0;
    while (s < suffix && s < n.size() && n[n.size() - 1 - s] == names.front()[names.front().size() - 1 - s]) ++s;
    suffix = s;
  }
  // Whole '-' separated words only.
  while (prefix > 0 && names.front()[prefix - 1] != '-') --prefix;
  while (suffix > 0 && names.front()[names.front().size() - suffix] != '-') --suffix;
  std::vector<std::string> out;
  for (const std::string &n : names) {
    if (prefix + suffix >= n.size()) return names;
    out.push_back(n.substr(prefix, n.size() - prefix - suffix));
  }
  return out;
}

// One screen for several cohorts: a row per cohort (its workload), a
// column per implementation; each cell the speedup over the cohort's
// baseline with its 95 % interval and verdict, "baseline", or the status
// of a run that cannot be ranked.
// A column per implementation and run label ("cpu-reference[a]"), so that
// two invocations compared together keep a column each; runs that share
// both within one cohort are numbered there ("fused #2").
std::string render_pivot(const CompareReport &report) {
  std::vector<std::string> implementations, workloads;
  std::vector<std::string> column_of_run(report.runs.size());
  for (const Cohort &cohort : report.cohorts) {
    std::map<std::string, int> seen;
    for (const std::size_t run : cohort.members) {
      const ComparedRun &r = report.runs[run];
      const std::string base = r.run_label.empty() ? r.implementation
                                                   : fmt::format("{}[{}]", r.implementation, r.run_label);
      const int n = ++seen[base];
      column_of_run[run] = n == 1 ? base : fmt::format("{} #{}", base, n);
    }
  }
  for (const Cohort &cohort : report.cohorts)
    for (const std::size_t run : cohort.members)
      if (std::find(implementations.begin(), implementations.end(), column_of_run[run]) == implementations.end())
        implementations.push_back(column_of_run[run]);
  for (const Cohort &cohort : report.cohorts) workloads.push_back(report.runs[cohort.reference].workload_name);
  const std::vector<std::string> rows = distinct_names(workloads);
  std::vector<std::string> headers{"workload"};
  headers.insert(headers.end(), implementations.begin(), implementations.end());
  TextTable table(headers, std::vector<TextTable::Align>(headers.size(), TextTable::Align::left));
  for (std::size_t c = 0; c < report.cohorts.size(); ++c) {
    const Cohort &cohort = report.cohorts[c];
    std::vector<std::string> cells(implementations.size(), "·");
    const auto column = [&](std::size_t run) {
      return static_cast<std::size_t>(
          std::find(implementations.begin(), implementations.end(), column_of_run[run]) -
          implementations.begin());
    };
    for (const RankedMember &member : cohort.ranking) {
      if (member.is_baseline) {
        cells[column(member.run)] = "baseline";
        continue;
      }
      const PairComparison &p = *member.vs_baseline;
      const stats::Interval &s = p.medians.speedup;
      cells[column(member.run)] =
          fmt::format("{:.2f}× [{:.2f}, {:.2f}] {}", s.estimate, s.low, s.high, to_string(p.verdict));
    }
    for (const PairView &view : cohort.not_ranked)
      cells[column(view.run)] = std::string(to_string(report.runs[view.run].status));
    const bool repeated = std::count(rows.begin(), rows.end(), rows[c]) > 1;
    std::vector<std::string> row{repeated ? fmt::format("{} (cohort {})", rows[c], c + 1) : rows[c]};
    row.insert(row.end(), cells.begin(), cells.end());
    table.add_row(std::move(row));
  }
  std::string out = fmt::format("\nsummary: {} workloads × {} implementation runs; speedup over each workload's "
                                "baseline [95 % CI] and verdict, or the run's status (· not run)\n",
                                report.cohorts.size(), implementations.size());
  out += table.render("  ");
  return out;
}

// What the summary leaves out, counted, with where to find it.
std::string render_omitted(const CompareReport &report) {
  std::size_t caveats = 0, notes = 0;
  for (const ComparedRun &run : report.runs) caveats += run.caveats.empty() ? 0 : 1;
  for (const Cohort &cohort : report.cohorts) {
    notes += cohort.notes.size();
    for (const RankedMember &m : cohort.ranking)
      caveats += m.caveats.empty() && !(m.vs_baseline && !m.vs_baseline->state_caveat.empty()) ? 0 : 1;
  }
  std::string out;
  if (caveats > 0) out += fmt::format("  {} caveat{} on these runs\n", caveats, caveats == 1 ? "" : "s");
  if (notes > 0) out += fmt::format("  {} cohort note{}\n", notes, notes == 1 ? "" : "s");
  if (!report.not_comparable.empty())
    out += fmt::format("  {} run{} outside the baseline's cohort, each also viewed against it across workloads\n",
                       report.not_comparable.size(), report.not_comparable.size() == 1 ? "" : "s");
  return out.empty() ? "" : "\nnot shown (kibench compare --verbose shows every cohort in full):\n" + out;
}

} // namespace

std::string render_table(const CompareReport &report, bool verbose) {
  std::string out;
  out +=
      fmt::format("kibench compare: {} run{} in {} cohort{}; baseline {} ({})\n", report.runs.size(),
                  report.runs.size() == 1 ? "" : "s", report.cohorts.size(),
                  report.cohorts.size() == 1 ? "" : "s", report.runs[report.anchor].id, report.anchor_choice);
  out += fmt::format(
      "intervals: {:g} % percentile bootstrap of the difference of medians, {} resamples, seed {}\n",
      report.bootstrap.confidence * 100.0, report.bootstrap.resamples, report.bootstrap.seed);
  const bool summarized = report.cohorts.size() > 1;
  if (!summarized || verbose) {
    for (std::size_t c = 0; c < report.cohorts.size(); ++c)
      render_cohort(out, report, report.cohorts[c], c + 1);
    if (!report.not_comparable.empty()) {
      out += fmt::format("\nnot comparable with the baseline {} (other cohorts):\n",
                         report.runs[report.anchor].id);
      render_views(out, report, report.not_comparable, "  ");
    }
  }
  if (summarized) {
    out += render_pivot(report);
    if (!verbose) {
      // Runs apart from the baseline for more than their workload (another
      // environment or protocol: what a CI gate that compared nothing needs
      // to see) are shown in full; the cross-workload views are not.
      std::vector<PairView> apart;
      for (const PairView &view : report.not_comparable)
        if (std::any_of(view.reasons.begin(), view.reasons.end(),
                        [](const Reason &r) { return r.code != ReasonCode::workload_mismatch; }))
          apart.push_back(view);
      if (!apart.empty()) {
        out += fmt::format("\nnot comparable with the baseline {} for more than their workload:\n",
                           report.runs[report.anchor].id);
        render_views(out, report, apart, "  ");
      }
      out += render_omitted(report);
    }
  }
  if (report.gate) out += fmt::format("\n{}\n", gate_summary(report, *report.gate));
  return out;
}

} // namespace kibench::compare
