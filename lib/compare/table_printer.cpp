#include "lib/compare/table_printer.hpp"

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

} // namespace

std::string render_table(const CompareReport &report) {
  std::string out;
  out +=
      fmt::format("kibench compare: {} run{} in {} cohort{}; baseline {} ({})\n", report.runs.size(),
                  report.runs.size() == 1 ? "" : "s", report.cohorts.size(),
                  report.cohorts.size() == 1 ? "" : "s", report.runs[report.anchor].id, report.anchor_choice);
  out += fmt::format(
      "intervals: {:g} % percentile bootstrap of the difference of medians, {} resamples, seed {}\n",
      report.bootstrap.confidence * 100.0, report.bootstrap.resamples, report.bootstrap.seed);
  for (std::size_t c = 0; c < report.cohorts.size(); ++c)
    render_cohort(out, report, report.cohorts[c], c + 1);
  if (!report.not_comparable.empty()) {
    out += fmt::format("\nnot comparable with the baseline {} (other cohorts):\n",
                       report.runs[report.anchor].id);
    render_views(out, report, report.not_comparable, "  ");
  }
  if (report.gate) out += fmt::format("\n{}\n", gate_summary(report, *report.gate));
  return out;
}

} // namespace kibench::compare
