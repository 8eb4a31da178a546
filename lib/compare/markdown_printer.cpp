#include "lib/compare/markdown_printer.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "lib/compare/regression_gate.hpp"
#include "lib/compare/report_text.hpp"
#include "lib/io/terminal_text.hpp"

namespace kibench::compare {
namespace {

// Text outside code spans, from names and notes that manifests supply: with
// control characters escaped and <, > and & as entities, no input can
// become HTML in a job summary (a <script>, an <img onerror>).
std::string inline_text(std::string_view plain) {
  std::string out;
  for (const char c : io::printable(plain)) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// A table cell: pipes would end the cell, newlines the row.
std::string cell(std::string_view plain) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = plain.find('\n', start);
    for (const char c : inline_text(plain.substr(start, end == std::string_view::npos ? end : end - start))) {
      if (c == '|') out += '\\';
      out += c;
    }
    if (end == std::string_view::npos) return out;
    out += "<br>";
    start = end + 1;
  }
}

// A code span that holds `literal` whatever it contains: fenced by one
// backtick more than its longest run of backticks (CommonMark), padded
// when it starts or ends with one. Inside a table, pipes are escaped too
// (GitHub ends a cell at a pipe even in a code span).
std::string code(std::string_view literal, bool in_table = false) {
  const std::string shown = io::printable(literal);
  std::size_t longest = 0, run = 0;
  for (const char c : shown) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !shown.empty() && (shown.front() == '`' || shown.back() == '`');
  std::string body;
  for (const char c : shown) {
    if (in_table && c == '|') body += '\\';
    body += c;
  }
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string code_cell(std::string_view literal) {
  return code(literal, true);
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
        fmt::format("| {} | {} | {} | {} | {} | {} |\n", code_cell(run.id), cell(text::median(run)),
                    cell(text::reason_codes(view)), details, cell(text::view_summary(view, report)), caveats);
  }
}

void render_cohort(std::string &out, const CompareReport &report, const Cohort &cohort, std::size_t number) {
  const ComparedRun &first = report.runs[cohort.reference];
  out += fmt::format("\n### Cohort {} of {} · {}\n\n", number, report.cohorts.size(),
                     inline_text(text::cohort_profile(cohort)));
  out += fmt::format("Comparison key {} · workload {} · protocol {} · environment {} · minimum effect {}\n",
                     code(cohort.comparison_key), code(first.workload_name), code(first.protocol_name),
                     code(first.environment_name), inline_text(text::minimum_effect(first)));
  for (const auto &note : cohort.notes) out += fmt::format("\n> {}\n", inline_text(note));
  if (!cohort.ranking.empty()) {
    out += "\n| rank | run | median | n | vs baseline [95 % CI] | speedup [95 % CI] | pairing | verdict |\n";
    out += "|---:|---|---:|---:|---|---|---|---|\n";
    for (const RankedMember &member : cohort.ranking) {
      const ComparedRun &run = report.runs[member.run];
      if (member.is_baseline) {
        out += fmt::format("| {} | {} (baseline) | {} | {} | — | — | — | baseline |\n", member.rank,
                           code_cell(run.id), cell(text::median(run)), cell(text::sample_count(run)));
        continue;
      }
      const PairComparison &c = *member.vs_baseline;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | **{}** |\n", member.rank, code_cell(run.id),
                         cell(text::median(run)), cell(text::sample_count(run)),
                         cell(text::relative_difference(c)), cell(text::speedup(c)), cell(text::pairing(c)),
                         cell(to_string(c.verdict)));
    }
    out += "\n";
    for (const RankedMember &member : cohort.ranking) {
      if (!member.vs_baseline && member.caveats.empty()) continue;
      out += fmt::format("- {}: {}\n", code(report.runs[member.run].id),
                         member.vs_baseline ? inline_text(text::verdict(*member.vs_baseline))
                                            : std::string("baseline"));
      if (member.vs_baseline && !member.vs_baseline->state_caveat.empty())
        out += fmt::format("  - caveat: {}\n", inline_text(member.vs_baseline->state_caveat));
      for (const auto &caveat : member.caveats) out += fmt::format("  - caveat: {}\n", inline_text(caveat));
    }
  }
  if (!cohort.not_ranked.empty()) {
    out +=
        fmt::format("\n**Not ranked** (described against {}):\n\n", code(report.runs[cohort.reference].id));
    render_views(out, report, cohort.not_ranked);
  }
  for (const std::size_t i : cohort.members) {
    for (const auto &caveat : report.runs[i].caveats)
      out += fmt::format("\n> caveat: {}: {}\n", code(report.runs[i].id), inline_text(caveat));
  }
}

} // namespace

std::string render_markdown(const CompareReport &report) {
  std::string out = "## kibench compare\n\n";
  out +=
      fmt::format("{} run{} in {} cohort{} · baseline {} ({}) · {:g} % percentile-bootstrap intervals of the "
                  "difference of medians ({} resamples, seed {})\n",
                  report.runs.size(), report.runs.size() == 1 ? "" : "s", report.cohorts.size(),
                  report.cohorts.size() == 1 ? "" : "s", code(report.runs[report.anchor].id),
                  inline_text(report.anchor_choice), report.bootstrap.confidence * 100.0,
                  report.bootstrap.resamples, report.bootstrap.seed);
  if (report.gate) {
    out += fmt::format("\n**Regression gate: {}** — {}\n", report.gate->passed() ? "passed" : "FAILED",
                       inline_text(gate_summary(report, *report.gate)));
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
