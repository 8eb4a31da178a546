#include "lib/report/html_page.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lib/compare/report_text.hpp"
#include "lib/json/canonical.hpp"
#include "lib/report/html_escape.hpp"
#include "lib/report/page_style.hpp"
#include "lib/report/palette.hpp"
#include "lib/report/report_charts.hpp"
#include "lib/workload/workload.hpp"
#include "lib/report/units.hpp"

namespace kibench::report {
namespace {

constexpr std::string_view kDash = "—";

std::string e(std::string_view text) {
  return escape_html(text);
}

std::string environment_anchor(const ReportModel &model, const std::string &digest) {
  for (std::size_t i = 0; i < model.environments.size(); ++i)
    if (model.environments[i].digest == digest) return fmt::format("env-{}", i + 1);
  return "environments";
}

std::string duration_or_dash(const std::optional<double> &ns) {
  return ns ? compare::text::duration(*ns) : std::string(kDash);
}

// A time range as a cell that may wrap after its dash, and nowhere else:
// "35.27–\n36.03 ms" rather than a table wider than its card.
std::string range_cell(const std::string &title, const std::string &range) {
  std::string html;
  for (const char c : e(range)) html += c == ' ' ? std::string("&nbsp;") : std::string(1, c);
  std::string wrapped;
  for (std::size_t at = 0;;) {
    const std::size_t dash = html.find("–", at);
    if (dash == std::string::npos) {
      wrapped += html.substr(at);
      break;
    }
    wrapped += html.substr(at, dash - at) + "–<wbr>";
    at = dash + std::string_view("–").size();
  }
  return fmt::format("<td class=\"range\"{}>{}</td>", title.empty() ? "" : fmt::format(" title=\"{}\"", e(title)),
                     wrapped);
}

std::string status_cell(RunStatus status) {
  const char *tone = status == RunStatus::passed ? "status-passed"
                     : is_failure(status)        ? "status-failed"
                                                 : "status-other";
  return fmt::format("<td class=\"text {}\">{}</td>", tone, e(to_string(status)));
}

std::string swatch(const ColorAssignment &colors, const std::string &implementation) {
  return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>",
                     e(colors.color_of(implementation)));
}

void append_figure(std::string &out, const std::optional<Chart> &chart) {
  if (!chart) return;
  out += "<figure>\n";
  out += chart->svg;
  out += fmt::format("<figcaption><strong>{}.</strong> {}</figcaption>\n</figure>\n", e(chart->title),
                     e(chart->caption));
}

std::string axes_text(const CohortSection &cohort) {
  std::vector<std::string> parts;
  for (const auto &[name, value] : cohort.axes) parts.push_back(fmt::format("{} {}", e(name), value));
  return parts.empty() ? std::string(kDash) : fmt::format("{}", fmt::join(parts, " · "));
}

std::string policy_text(const CohortSection &cohort) {
  if (!cohort.tolerance_relative) return std::string(kDash);
  const bool loss_rule = cohort.comparator == kComparatorLossRelAbs;
  std::string text = fmt::format("{} relative L2 error ≤ {}", loss_rule ? "each gradient's" : "each output's",
                                 json::format_number(*cohort.tolerance_relative));
  if (cohort.tolerance_absolute)
    text += fmt::format(" (max |error| ≤ {} where the reference is zero)",
                        json::format_number(*cohort.tolerance_absolute));
  if (loss_rule)
    text += fmt::format("; the loss's |error| ≤ max({} |ref|, {})", json::format_number(kLossRelativeTolerance),
                        json::format_number(kLossAbsoluteFloor));
  return text;
}

void append_facts(std::string &out, const ReportModel &model, const CohortSection &cohort) {
  out += "<dl class=\"facts\">\n";
  out += fmt::format("<dt>Axes</dt><dd>{}</dd>\n", axes_text(cohort));
  out += fmt::format("<dt>Protocol</dt><dd>{} <code>{}</code></dd>\n",
                     e(cohort.protocol_title.empty() ? cohort.protocol_name : cohort.protocol_title),
                     e(cohort.protocol_name));
  out += fmt::format("<dt>Environment</dt><dd><a href=\"#{}\">{}</a></dd>\n",
                     environment_anchor(model, cohort.environment_digest), e(cohort.environment_name));
  out += fmt::format("<dt>Baseline</dt><dd>{}</dd>\n",
                     cohort.baseline_id.empty() ? "none: no member is rankable" : e(cohort.baseline_id));
  out += fmt::format("<dt>Correctness policy</dt><dd>{}</dd>\n", e(policy_text(cohort)));
  out += fmt::format("<dt>Comparison key</dt><dd><code title=\"{0}\">{1}</code></dd>\n",
                     e(cohort.comparison_key), e(compare::text::short_digest(cohort.comparison_key)));
  out += "</dl>\n";
}

void append_timing_table(std::string &out, const CohortSection &cohort, const ColorAssignment &colors) {
  out +=
      "<div class=\"table-wrap\"><table class=\"timing\">\n<thead><tr><th>implementation</th><th>status</th>"
      "<th>samples</th><th>median</th><th>95 % interval</th><th>p20–p80</th><th>rank</th>"
      "<th>speedup [95 %], verdict</th><th>÷&nbsp;floor</th><th>TFLOP/s</th><th>peak</th>"
      "<th>workspace</th></tr></thead>\n<tbody>\n";
  for (const RunFigures &run : cohort.runs) {
    out += fmt::format("<tr{}>", is_failure(run.status) ? " class=\"failed\"" : "");
    // Where the run was read and when it was measured, on hover.
    out += fmt::format("<td title=\"{} · observed {}\">{}{}{}</td>", e(run.label), e(run.observed_at),
                       swatch(colors, run.implementation), e(run.id),
                       run.is_baseline ? " <em>(baseline)</em>" : "");
    out += status_cell(run.status);
    out += fmt::format("<td>{}</td>", run.samples > 0 ? std::to_string(run.samples) : std::string(kDash));
    out += fmt::format("<td>{}</td>", e(duration_or_dash(run.median_ns)));
    out += range_cell(run.interval_source,
                      run.median_interval ? format_time_range(run.median_interval->low, run.median_interval->high)
                                          : std::string(kDash));
    out += range_cell("", run.p20_ns && run.p80_ns ? format_time_range(*run.p20_ns, *run.p80_ns)
                                                   : std::string(kDash));
    out += fmt::format("<td>{}</td>", run.rank ? std::to_string(*run.rank) : std::string(kDash));
    if (run.speedup) {
      out += fmt::format("<td class=\"verdict\" title=\"{}\">{:.3f}× [{:.3f}, {:.3f}] <em>{}</em></td>",
                         e(run.verdict_detail),
                         run.speedup->estimate, run.speedup->low, run.speedup->high, e(run.verdict));
    } else if (run.is_baseline) {
      out += "<td>1× <em>baseline</em></td>";
    } else if (!run.not_ranked_reason.empty()) {
      out += fmt::format("<td class=\"text\">not ranked: {}</td>", e(run.not_ranked_reason));
    } else {
      out += fmt::format("<td>{}</td>", kDash);
    }
    out += fmt::format("<td>{}</td>", run.is_floor         ? std::string("floor")
                                      : run.ratio_to_floor ? fmt::format("{:.2f}×", *run.ratio_to_floor)
                                                           : std::string(kDash));
    out += fmt::format("<td>{}</td>", run.tflops ? format_significant(*run.tflops) : std::string(kDash));
    out += fmt::format("<td>{}</td>", run.peak_bytes ? format_bytes(*run.peak_bytes) : std::string(kDash));
    out += fmt::format("<td>{}</td>",
                       run.workspace_bytes ? format_bytes(*run.workspace_bytes) : std::string(kDash));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

std::string error_text(double value) {
  return fmt::format("{:.2e}", value);
}

void append_correctness_table(std::string &out, const CohortSection &cohort, const ColorAssignment &colors) {
  std::vector<std::string> outputs;
  for (const RunFigures &run : cohort.runs)
    for (const OutputError &error : run.errors)
      if (std::find(outputs.begin(), outputs.end(), error.output) == outputs.end())
        outputs.push_back(error.output);
  bool any_maximum = false;
  for (const RunFigures &run : cohort.runs)
    any_maximum = any_maximum || run.max_relative_error || run.max_absolute_error;
  if (outputs.empty() && !any_maximum) {
    out += "<p class=\"subtitle\">No run reports errors against the oracle.</p>\n";
    return;
  }
  out += "<div class=\"table-wrap\"><table "
         "class=\"correctness\">\n<thead><tr><th>implementation</th><th>status</th>";
  for (const std::string &output : outputs) out += fmt::format("<th>rel L2: {}</th>", e(output));
  out += "<th>max rel error</th><th>max abs error</th></tr></thead>\n<tbody>\n";
  for (const RunFigures &run : cohort.runs) {
    out += fmt::format("<tr{}><td>{}{}</td>", is_failure(run.status) ? " class=\"failed\"" : "",
                       swatch(colors, run.implementation), e(run.id));
    out += status_cell(run.status);
    for (const std::string &output : outputs) {
      const auto found = std::find_if(run.errors.begin(), run.errors.end(),
                                      [&](const OutputError &error) { return error.output == output; });
      if (found == run.errors.end()) {
        out += fmt::format("<td>{}</td>", kDash);
      } else {
        out += fmt::format("<td{}>{}</td>",
                           found->above_tolerance ? " class=\"above\" title=\"above the tolerance\"" : "",
                           error_text(found->relative_l2));
      }
    }
    out += fmt::format("<td>{}</td><td>{}</td></tr>\n",
                       run.max_relative_error ? error_text(*run.max_relative_error) : std::string(kDash),
                       run.max_absolute_error ? error_text(*run.max_absolute_error) : std::string(kDash));
  }
  out += "</tbody></table></div>\n";
}

void append_notes(std::string &out, const std::vector<std::string> &notes) {
  if (notes.empty()) return;
  out += "<ul class=\"notes\">\n";
  for (const std::string &note : notes) out += fmt::format("<li>{}</li>\n", e(note));
  out += "</ul>\n";
}

void append_cohort(std::string &out, const ReportModel &model, const CohortSection &cohort,
                   const ColorAssignment &colors) {
  out += fmt::format("<section class=\"card cohort\" id=\"cohort-{0}\" data-testid=\"cohort-{0}\">\n",
                     e(cohort.slug));
  out += fmt::format("<h2>{}</h2>\n", e(cohort.workload_name));
  if (!cohort.workload_title.empty())
    out += fmt::format("<p class=\"subtitle\">{}</p>\n", e(cohort.workload_title));
  append_facts(out, model, cohort);
  out += "<div class=\"charts\">\n";
  for (const Chart &chart : cohort_charts(cohort, colors)) append_figure(out, chart);
  out += "</div>\n<h3>Timing</h3>\n";
  append_timing_table(out, cohort, colors);
  out += "<h3>Correctness against the oracle</h3>\n";
  append_correctness_table(out, cohort, colors);
  append_notes(out, cohort.notes);
  out += "</section>\n";
}

// The cohorts' ratios to the floor side by side, where there are several.
void append_overview(std::string &out, const std::optional<Chart> &chart) {
  if (!chart) return;
  out += "<section class=\"card\" id=\"overview\" data-testid=\"overview\">\n<h2>Across workloads</h2>\n";
  out += "<p class=\"subtitle\">Each cohort's runs against its own cublas-floor run.</p>\n";
  out += "<div class=\"charts\">\n";
  append_figure(out, chart);
  out += "</div>\n</section>\n";
}

void append_sweeps(std::string &out, const ReportModel &model, const ColorAssignment &colors) {
  if (model.sweeps.empty()) return;
  out += "<section class=\"card\" id=\"sweeps\" data-testid=\"sweeps\">\n<h2>Sweeps</h2>\n";
  out +=
      "<p class=\"subtitle\">Runs of one operation, protocol and environment whose workloads differ only in "
      "one axis (the number of tokens T, the vocabulary V, the hidden size H) and what follows from "
      "it.</p>\n";
  for (const Sweep &sweep : model.sweeps) {
    std::vector<std::string> values;
    for (const std::int64_t v : sweep.values) values.push_back(std::to_string(v));
    out += fmt::format("<div class=\"sweep\" id=\"sweep-{0}\" data-testid=\"sweep-{0}\">\n", e(sweep.slug));
    out += fmt::format("<h3>{} over {} · {}</h3>\n", e(sweep.operation_name), e(axis_symbol(sweep.axis)),
                       e(sweep.fixed_axes));
    out += fmt::format("<dl class=\"facts\"><dt>{}</dt><dd>{}</dd><dt>Protocol</dt><dd>{}</dd>"
                       "<dt>Environment</dt><dd>{}</dd></dl>\n",
                       e(axis_symbol(sweep.axis)), fmt::join(values, ", "), e(sweep.protocol_title),
                       e(sweep.environment_name));
    out += "<div class=\"charts\">\n";
    append_figure(out, sweep_time_chart(sweep, colors));
    const auto tflops = sweep_tflops_chart(sweep, colors);
    append_figure(out, tflops);
    out += "</div>\n";
    std::vector<std::string> notes = sweep.notes;
    if (!tflops) notes.push_back("no run of this sweep reports its throughput: no TFLOP/s chart");
    append_notes(out, notes);
    out += "</div>\n";
  }
  out += "</section>\n";
}

void append_environments(std::string &out, const ReportModel &model) {
  out += "<section class=\"card\" id=\"environments\">\n<h2>Environments</h2>\n";
  for (std::size_t i = 0; i < model.environments.size(); ++i) {
    const EnvironmentSection &env = model.environments[i];
    out += fmt::format("<div id=\"env-{}\" data-testid=\"environment\">\n<h3>{}</h3>\n", i + 1, e(env.name));
    if (!env.title.empty()) out += fmt::format("<p class=\"subtitle\">{}</p>\n", e(env.title));
    out += fmt::format("<dl class=\"facts\"><dt>digest</dt><dd><code>{}</code></dd>\n", e(env.digest));
    for (const auto &[key, value] : env.facts)
      out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", e(key), e(value));
    out += "</dl>\n</div>\n";
  }
  out += "</section>\n";
}

void append_header(std::string &out, const ReportModel &model, bool has_overview) {
  out += fmt::format("<header>\n<h1>{}</h1>\n", e(model.title));
  out += fmt::format("<p class=\"lede\">{} run{} in {} cohort{}{} · baseline: {} · generated by {}</p>\n",
                     model.run_count, model.run_count == 1 ? "" : "s", model.cohorts.size(),
                     model.cohorts.size() == 1 ? "" : "s",
                     model.sweeps.empty() ? ""
                                          : fmt::format(" · {} sweep{}", model.sweeps.size(),
                                                        model.sweeps.size() == 1 ? "" : "s"),
                     e(model.anchor_choice), e(model.generator));
  out += "<details><summary>Inputs</summary><ul>\n";
  for (const std::string &input : model.inputs) out += fmt::format("<li><code>{}</code></li>\n", e(input));
  out += "</ul></details>\n<nav><ol>\n";
  if (has_overview) out += "<li><a href=\"#overview\">Across workloads</a></li>\n";
  if (!model.sweeps.empty()) out += "<li><a href=\"#sweeps\">Sweeps</a></li>\n";
  for (const CohortSection &cohort : model.cohorts)
    out += fmt::format("<li><a href=\"#cohort-{}\">{}</a></li>\n", e(cohort.slug), e(cohort.workload_name));
  out += "<li><a href=\"#environments\">Environments</a></li>\n</ol></nav>\n</header>\n";
}

void append_footer(std::string &out, const ReportModel &model) {
  out += "<footer>\n<h2>How to read this report</h2>\n";
  out +=
      "<p>A <strong>cohort</strong> is a set of runs sharing one comparison key: the same operation, "
      "workload, "
      "protocol, environment, correctness policy and metric. Only runs of one cohort are ranked against each "
      "other (as by <code>kibench compare</code>).</p>\n";
  out += "<p><strong>Median whiskers</strong> are the 95 % interval of each run's median, from the order "
         "statistics of its raw samples (distribution-free). <strong>Speedup whiskers</strong> are the 95 % "
         "percentile-bootstrap interval of baseline median ÷ candidate median";
  out += fmt::format(" ({} resamples, seed {}, paired by interleave round when both runs come from one "
                     "invocation). ",
                     model.bootstrap.resamples, model.bootstrap.seed);
  out += "The verdict is <em>faster</em> or <em>slower</em> only when the interval of the difference "
         "excludes zero "
         "and the effect exceeds both the protocol's minimum effect and the measured noise floor; otherwise "
         "<em>shared</em>.</p>\n";
  out +=
      "<p>The <strong>ratio to the floor</strong> divides each median by that of <code>cublas-floor</code>, "
      "which times only the two GEMMs the loss needs: a bound no fused kernel can beat. Runs outlined in red "
      "failed their correctness check against the fp64 oracle; their timings are shown but never "
      "ranked.</p>\n";
  out += "</footer>\n";
}

} // namespace

std::string render_report_html(const ReportModel &model) {
  const ColorAssignment colors = assign_colors(model);
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n", e(model.title),
                     page_css());
  const std::optional<Chart> overview = floor_overview_chart(model.cohorts, colors);
  append_header(out, model, overview.has_value());
  // The overview and the sweeps first: they summarize what each cohort
  // below details.
  append_overview(out, overview);
  append_sweeps(out, model, colors);
  for (const CohortSection &cohort : model.cohorts) append_cohort(out, model, cohort, colors);
  append_environments(out, model);
  append_footer(out, model);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

} // namespace kibench::report
