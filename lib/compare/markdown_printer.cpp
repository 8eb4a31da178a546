#include "lib/compare/markdown_printer.hpp"

#include <fmt/format.h>

#include "lib/compare/regression_gate.hpp"
#include "lib/compare/report_text.hpp"

namespace kibench::compare {
namespace {

// A table cell: pipes would end the cell, newlines the row.
std::string cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "<br>";
    else
      out += c;
  }
  return out;
}

std::string code(const std::string &text) {
  return "`" + text + "`";
}

void render_views(std::string &out, const CompareReport &report, const std::vector<PairView> &views) {
  out += "| run | median | reason codes | differences | view | caveats |\n";
  out += "|---|---:|---|---|---|---|\n";
  for (const PairView &view : views) {
    const ComparedRun &run = report.runs[view.run];
    std::string details, caveats;
    for (const Reason &reason : view.reasons)
      details += (details.empty() ? "" : "<br>") + cell(reason.detail);
    for (const auto &caveat : view.caveats) caveats += (caveats.empty() ? "" : "<br>") + cell(caveat);
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} |\n", code(run.id), text::median(run),
                    cell(text::reason_codes(view)), details, cell(text::view_summary(view, report)), caveats);
  }
}

void render_cohort(std::string &out, const CompareReport &report, const Cohort &cohort, std::size_t number) {
  const ComparedRun &first = report.runs[cohort.reference];
  out += fmt::format("\n### Cohort {} of {} · {}\n\n", number, report.cohorts.size(),
                     text::cohort_profile(cohort));
  out += fmt::format("Comparison key {} · workload {} · protocol {} · environment {} · minimum effect {}\n",
                     code(cohort.comparison_key), code(first.workload_name), code(first.protocol_name),
                     code(first.environment_name), text::minimum_effect(first));
  for (const auto &note : cohort.notes) out += fmt::format("\n> {}\n", note);
  if (!cohort.ranking.empty()) {
    out += "\n| rank | run | median | n | vs baseline [95 % CI] | speedup [95 % CI] | pairing | verdict |\n";
    out += "|---:|---|---:|---:|---|---|---|---|\n";
    for (const RankedMember &member : cohort.ranking) {
      const ComparedRun &run = report.runs[member.run];
      if (member.is_baseline) {
        out += fmt::format("| {} | {} (baseline) | {} | {} | — | — | — | baseline |\n", member.rank,
                           code(run.id), text::median(run), text::sample_count(run));
        continue;
      }
      const PairComparison &c = *member.vs_baseline;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | **{}** |\n", member.rank, code(run.id),
                         text::median(run), text::sample_count(run), text::relative_difference(c),
                         text::speedup(c), text::pairing(c), to_string(c.verdict));
    }
    out += "\n";
    for (const RankedMember &member : cohort.ranking) {
      if (!member.vs_baseline) continue;
      out += fmt::format("- {}: {}\n", code(report.runs[member.run].id), text::verdict(*member.vs_baseline));
      if (!member.vs_baseline->state_caveat.empty())
        out += fmt::format("  - caveat: {}\n", member.vs_baseline->state_caveat);
    }
  }
  if (!cohort.not_ranked.empty()) {
    out +=
        fmt::format("\n**Not ranked** (described against {}):\n\n", code(report.runs[cohort.reference].id));
    render_views(out, report, cohort.not_ranked);
  }
  for (const std::size_t i : cohort.members) {
    for (const auto &caveat : report.runs[i].caveats)
      out += fmt::format("\n> caveat: {}: {}\n", code(report.runs[i].id), caveat);
  }
}

} // namespace

std::string render_markdown(const CompareReport &report) {
  std::string out = "## kibench compare\n\n";
  out += fmt::format(
      "{} run{} in {} cohort{} · baseline {} ({}) · {:g} % percentile-bootstrap intervals of the "
      "difference of medians ({} resamples, seed {})\n",
      report.runs.size(), report.runs.size() == 1 ? "" : "s", report.cohorts.size(),
      report.cohorts.size() == 1 ? "" : "s", code(report.runs[report.anchor].id), report.anchor_choice,
      report.bootstrap.confidence * 100.0, report.bootstrap.resamples, report.bootstrap.seed);
  if (report.gate) {
    out += fmt::format("\n**Regression gate: {}** — {}\n", report.gate->passed() ? "passed" : "FAILED",
                       gate_summary(report, *report.gate));
  }
  for (std::size_t c = 0; c < report.cohorts.size(); ++c)
    render_cohort(out, report, report.cohorts[c], c + 1);
  if (!report.not_comparable.empty()) {
    out += fmt::format("\n### Not comparable with the baseline {}\n\n", code(report.runs[report.anchor].id));
    render_views(out, report, report.not_comparable);
  }
  return out;
}

} // namespace kibench::compare
