// The report page as a string, from a model built by hand: manifest text is
// escaped wherever it lands, nothing points off the page, every chart is
// one sized <svg> with a title and a test id, and charts without data are
// left out rather than drawn empty. The building blocks (escaping, slugs,
// axis ticks) are checked on their own first.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <regex>
#include <string>
#include <vector>

#include "lib/report/axis_scale.hpp"
#include "lib/report/chart_files.hpp"
#include "lib/report/html_escape.hpp"
#include "lib/report/html_page.hpp"
#include "lib/report/run_figures.hpp"
#include "lib/json/parse.hpp"
#include "lib/report/slug.hpp"
#include "lib/report/svg_canvas.hpp"
#include "lib/report/units.hpp"

using namespace kibench::report;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

constexpr const char *kHostile = "<script>alert(\"x\")</script> & 'q'";

std::size_t count(const std::string &text, const std::string &needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

RunFigures run(std::string implementation, double median_ns,
               kibench::RunStatus status = kibench::RunStatus::passed) {
  RunFigures r;
  r.id = r.implementation = std::move(implementation);
  r.status = status;
  r.median_ns = median_ns;
  r.median_interval = kibench::stats::Interval{median_ns, median_ns * 0.98, median_ns * 1.03};
  r.interval_source = "order statistics";
  r.samples = 40;
  r.p20_ns = median_ns * 0.99;
  r.p80_ns = median_ns * 1.02;
  r.tflops = 1e-3 * 1e6 / median_ns;
  r.peak_bytes = 2e6;
  r.workspace_bytes = 5e5;
  r.errors = {OutputError{"loss", 1e-5, false}, OutputError{"grad_student_input", 2e-3, false}};
  r.max_relative_error = 2e-3;
  r.max_absolute_error = 1e-4;
  return r;
}

// One cohort of reference (baseline), fused (faster), a failed candidate
// and the floor; one sweep of two implementations over three T.
ReportModel sample_model() {
  ReportModel model;
  model.title = std::string("Report ") + kHostile;
  model.generator = "kibench test";
  model.inputs = {"runs/<dir>"};
  model.anchor_choice = "the run named reference";
  model.run_count = 4;

  CohortSection cohort;
  cohort.slug = slug("workload-a");
  cohort.workload_name = "workload-a";
  cohort.workload_title = kHostile;
  cohort.axes = {{"tokens", 32}, {"vocab", 1000}, {"hidden", 64}};
  cohort.protocol_name = "proto";
  cohort.protocol_title = "full pass";
  cohort.environment_digest = "sha256:env";
  cohort.environment_name = kHostile;
  cohort.comparison_key = "sha256:0123456789abcdef0123456789abcdef";
  cohort.tolerance_relative = 0.01;
  cohort.tolerance_absolute = 1e-6;
  cohort.baseline_id = "reference";
  RunFigures reference = run("reference", 2e6);
  reference.is_baseline = true;
  reference.rank = 2;
  reference.ratio_to_floor = 4.0;
  RunFigures fused = run("fused", 1e6);
  fused.rank = 1;
  fused.speedup = kibench::stats::Interval{2.0, 1.9, 2.1};
  fused.verdict = "faster";
  fused.verdict_detail = "faster: the interval excludes zero";
  fused.ratio_to_floor = 2.0;
  RunFigures broken = run(kHostile, 1.5e6, kibench::RunStatus::incorrect_numerical);
  broken.errors = {OutputError{"loss", 0.5, true}};
  broken.not_ranked_reason = "STATUS_NOT_PASSED";
  broken.ratio_to_floor = 3.0;
  RunFigures floor = run("cublas-floor", 5e5, kibench::RunStatus::incomplete_evidence);
  floor.is_floor = true;
  floor.errors.clear();
  floor.max_relative_error.reset();
  floor.max_absolute_error.reset();
  cohort.runs = {reference, fused, broken, floor};
  cohort.notes = {std::string("note ") + kHostile};
  model.cohorts.push_back(cohort);

  Sweep sweep;
  sweep.slug = "distill_jsd_loss-vocab-1000-hidden-64";
  sweep.operation_name = "distill_jsd_loss";
  sweep.axis = "tokens";
  sweep.fixed_axes = "vocab 1000, hidden 64";
  sweep.protocol_title = "full pass";
  sweep.environment_name = "host";
  sweep.values = {8, 32, 128};
  for (const std::string implementation : {"reference", "fused"}) {
    SweepSeries series{implementation, {}};
    for (const std::int64_t t : sweep.values) {
      const double ns = 1e4 * static_cast<double>(t) * (implementation == "fused" ? 0.5 : 1.0);
      series.points.push_back(SweepPoint{t, ns, kibench::stats::Interval{ns, ns * 0.95, ns * 1.05},
                                         0.01 * static_cast<double>(t), kibench::RunStatus::passed,
                                         implementation});
    }
    sweep.series.push_back(series);
  }
  model.sweeps.push_back(sweep);

  EnvironmentSection env;
  env.digest = "sha256:env";
  env.name = kHostile;
  env.facts = {{"hardware.product", kHostile}};
  model.environments.push_back(env);
  return model;
}

// The opening tag of the <svg> with this data-testid ("" when absent).
std::string svg_tag(const std::string &html, const std::string &test_id) {
  const std::regex tag("<svg [^>]*data-testid=\"" + test_id + "\"[^>]*>");
  std::smatch match;
  return std::regex_search(html, match, tag) ? match.str() : "";
}

// Shapes with this class, flagged or not ("bar" does not count "bar-group").
std::size_t shapes(const std::string &svg, const std::string &css_class) {
  return count(svg, "class=\"" + css_class + "\"") + count(svg, "class=\"" + css_class + " flagged\"");
}

// The whole <svg> element with this data-testid.
std::string svg_element(const std::string &html, const std::string &test_id) {
  const std::string tag = svg_tag(html, test_id);
  const std::size_t start = html.find(tag);
  if (tag.empty() || start == std::string::npos) return "";
  return html.substr(start, html.find("</svg>", start) + 6 - start);
}

} // namespace

TEST_CASE("escape_html escapes the five markup characters and nothing else", "[report]") {
  CHECK(escape_html("a<b>&\"c\"'d'") == "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  CHECK(escape_html("µs × — plain") == "µs × — plain");
  CHECK(escape_html("") == "");
}

TEST_CASE("slugs are lowercase identifiers, unique within a page", "[report]") {
  CHECK(slug("Distill JSD <loss> T=32") == "distill-jsd-loss-t-32");
  CHECK(slug("small-v1000_h64.t32") == "small-v1000_h64.t32");
  CHECK(slug("<>") == "x");
  SlugRegistry slugs;
  CHECK(slugs.unique("a") == "a");
  CHECK(slugs.unique("a-2") == "a-2");
  CHECK(slugs.unique("A") == "a-3"); // "a-2" is taken by a name of its own
  CHECK(slugs.unique("a") == "a-4");
}

TEST_CASE("axis ticks are round numbers inside the domain", "[report]") {
  const AxisScale linear = AxisScale::linear_from_zero(3.7, 0, 100);
  CHECK(linear.domain_end() == Approx(4.0));
  CHECK(linear.ticks() == std::vector<double>{0.0, 1.0, 2.0, 3.0, 4.0});
  CHECK(linear.position(2.0) == Approx(50.0));

  const AxisScale log = AxisScale::logarithmic(10, 1e5, 0, 400, 1.0);
  CHECK(log.ticks() == std::vector<double>{10, 100, 1000, 1e4, 1e5});
  CHECK(log.position(1000) == Approx(200.0));
  // Under one decade: 1, 2 and 5 times powers of ten fill in.
  const AxisScale narrow = AxisScale::logarithmic(15, 90, 0, 100, 1.0);
  CHECK(narrow.ticks() == std::vector<double>{15, 20, 30, 50, 70});
  CHECK(nice_step(0.23) == Approx(0.5));
  CHECK(format_tick(0.1 + 0.2) == "0.3");
  CHECK(format_bytes(1177092) == "1.2 MB");
}

TEST_CASE("the page escapes every manifest string and links nowhere off the page", "[report]") {
  const std::string html = render_report_html(sample_model());
  CHECK_THAT(html, StartsWith("<!DOCTYPE html>"));
  CHECK(html.find("<script") == std::string::npos);
  CHECK_THAT(html, Contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"));
  // No resource and no link that leaves the file.
  const std::regex external(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase);
  CHECK_FALSE(std::regex_search(html, external));
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  // The hostile implementation name is a row label and data attribute, escaped.
  CHECK(html.find("data-row=\"<") == std::string::npos);
}

TEST_CASE("every chart is one <svg> with size, title, axis labels and a test id", "[report]") {
  const std::string html = render_report_html(sample_model());
  const std::vector<std::string> charts{"chart-median-workload-a",
                                        "chart-speedup-workload-a",
                                        "chart-floor-workload-a",
                                        "chart-memory-workload-a",
                                        "chart-sweep-time-distill_jsd_loss-vocab-1000-hidden-64",
                                        "chart-sweep-tflops-distill_jsd_loss-vocab-1000-hidden-64"};
  CHECK(count(html, "<svg ") == charts.size());
  CHECK(count(html, "</svg>") == charts.size());
  for (const std::string &id : charts) {
    INFO(id);
    const std::string tag = svg_tag(html, id);
    REQUIRE_FALSE(tag.empty());
    std::smatch size;
    REQUIRE(std::regex_search(tag, size, std::regex(R"#(width="(\d+)" height="(\d+)")#")));
    CHECK(std::stoi(size[1]) > 0);
    CHECK(std::stoi(size[2]) > 0);
    const std::string svg = svg_element(html, id);
    CHECK(svg.find("<title>") == tag.size() + 1); // the first child
    CHECK(count(svg, "class=\"axis-label\"") >= 1);
  }
  // Bars: one per run with a median; speedup: baseline and the one ranked
  // candidate; floor: everyone but the floor; memory: two per run.
  CHECK(shapes(svg_element(html, charts[0]), "bar") == 4);
  CHECK(count(svg_element(html, charts[0]), "class=\"bar flagged\"") == 1);
  CHECK(shapes(svg_element(html, charts[1]), "bar") == 2);
  CHECK(shapes(svg_element(html, charts[2]), "bar") == 3);
  CHECK(shapes(svg_element(html, charts[3]), "bar") == 8);
  CHECK(shapes(svg_element(html, charts[4]), "point") == 6);
  CHECK(shapes(svg_element(html, charts[5]), "point") == 6);
  CHECK(count(svg_element(html, charts[4]), "class=\"series-line\"") == 2);
  // Units on every axis that has them.
  CHECK_THAT(svg_element(html, charts[0]), Contains("median latency (ms)"));
  CHECK_THAT(svg_element(html, charts[3]), Contains("memory (MB)"));
  CHECK_THAT(svg_element(html, charts[4]), Contains("tokens T (log scale)"));
  CHECK_THAT(svg_element(html, charts[4]), Contains("median latency (ms)"));
}

TEST_CASE("charts without data are left out, not drawn empty", "[report]") {
  ReportModel model = sample_model();
  CohortSection &cohort = model.cohorts.front();
  // A lone run: no candidate for a speedup, no floor, no memory figures.
  RunFigures lone = cohort.runs.front();
  lone.speedup.reset();
  lone.ratio_to_floor.reset();
  lone.peak_bytes.reset();
  lone.workspace_bytes.reset();
  cohort.runs = {lone};
  for (auto &series : model.sweeps.front().series)
    for (auto &point : series.points) point.tflops.reset();
  const std::string html = render_report_html(model);
  CHECK_FALSE(svg_tag(html, "chart-median-workload-a").empty());
  CHECK(html.find("chart-speedup-") == std::string::npos);
  CHECK(html.find("chart-floor-") == std::string::npos);
  CHECK(html.find("chart-memory-") == std::string::npos);
  CHECK(html.find("chart-sweep-tflops-") == std::string::npos);
  CHECK_THAT(html, Contains("no TFLOP/s chart"));
  CHECK(count(html, "<svg ") == 2);
}

TEST_CASE("long labels are cut in the middle, on code point boundaries", "[report]") {
  CHECK(fit_label("short", 10) == "short");
  // Between words, both ends kept: never inside a word.
  CHECK(fit_label("liger-bench-distill-jsd-loss-liger", 15) == "liger-…-liger");
  CHECK(fit_label("liger-bench-distill-jsd-loss-torch", 15) == "liger-…-torch");
  CHECK(fit_label("gpu-segfaults-in-sample", 12) == "gpu-…-sample");
  // A word longer than the half is cut where it must be.
  CHECK(fit_label("supercalifragilistic", 9) == "supe…stic");
  CHECK(fit_label("µµµµµµµµµµ", 5) == "µµ…µµ"); // two-byte code points stay whole
}

TEST_CASE("two cohorts with a floor get one overview of every ratio, sorted by their axes", "[report]") {
  ReportModel model = sample_model();
  const std::string single = render_report_html(model);
  CHECK(single.find("chart-floor-overview") == std::string::npos); // one cohort: its floor chart says it
  CohortSection wide = model.cohorts.front();
  wide.slug = slug("workload-b");
  wide.workload_name = "workload-b";
  wide.axes = {{"tokens", 32}, {"vocab", 1000}, {"hidden", 32}}; // smaller hidden: listed first
  wide.runs[1].ratio_to_floor = 1.25;
  model.cohorts.push_back(wide);
  const std::string html = render_report_html(model);
  const std::string overview = svg_element(html, "chart-floor-overview");
  REQUIRE_FALSE(overview.empty());
  CHECK_THAT(html, Contains("href=\"#overview\""));
  // Three runs with a ratio in each cohort (all but the floor); the failed
  // one drawn as such.
  CHECK(shapes(overview, "bar") == 6);
  CHECK(count(overview, "class=\"bar flagged\"") == 2);
  const std::size_t b = overview.find("H32 V1000 T32"), a = overview.find("H64 V1000 T32");
  REQUIRE(b != std::string::npos);
  REQUIRE(a != std::string::npos);
  CHECK(b < a);
  CHECK_THAT(overview, Contains("1.25× fused"));
  CHECK_THAT(overview, Contains("2.00× fused"));
  CHECK(html.find(overview) < html.find("id=\"sweeps\"")); // the page opens with it
}

TEST_CASE("every chart of the page is also an SVG document of its own", "[report]") {
  ReportModel model = sample_model();
  model.cohorts.push_back(model.cohorts.front());
  model.cohorts.back().slug = "workload-a-2";
  const std::string html = render_report_html(model);
  const std::vector<ChartFile> files = chart_files(model);
  CHECK(files.size() == count(html, "<svg "));
  for (const ChartFile &file : files) {
    INFO(file.name);
    REQUIRE(file.name.ends_with(".svg"));
    const std::string id = file.name.substr(0, file.name.size() - 4);
    const std::string inline_svg = svg_element(html, id);
    REQUIRE_FALSE(inline_svg.empty());
    CHECK(file.svg == standalone_svg(inline_svg + "\n"));
    CHECK_THAT(file.svg, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "
                                    "xmlns=\"http://www.w3.org/2000/svg\" width="));
    // <title> and <desc> stay first, then the stylesheet and the background.
    const std::size_t title = file.svg.find("<title>"), desc = file.svg.find("<desc>"),
                      style = file.svg.find("<style>"), background = file.svg.find("<rect width=\"100%\"");
    CHECK(title < desc);
    CHECK(desc < style);
    CHECK(style < background);
    CHECK(file.svg.find("svg.chart text") != std::string::npos);
    // Everything the inline chart draws is there, unchanged.
    CHECK(file.svg.find(inline_svg.substr(inline_svg.find("</desc>") + 8)) != std::string::npos);
  }
  CHECK_THROWS_AS(standalone_svg("<div>not a chart</div>"), std::logic_error);
}

TEST_CASE("the correctness table judges the loss by its own bound and the gradients by rel L2", "[report]") {
  using kibench::report::above_bound;
  const auto policy = [](const char *comparator) {
    return kibench::json::parse(fmt::format(
        R"({{"comparator": "{}", "maxRelativeError": 0.01, "maxAbsoluteError": 1e-6}})", comparator),
        "policy");
  };
  const auto loss_rule = policy("fp64_oracle_loss_rel_abs_grads_rel_l2");
  const auto every_output = policy("fp64_oracle_rel_l2");
  // A loss of 3.3 off by 1e-3: within 1 %, past max(1e-4 * 3.3, 1e-5).
  CHECK(above_bound(loss_rule, "loss", 1e-3 / 3.3, 1e-3));
  CHECK_FALSE(above_bound(every_output, "loss", 1e-3 / 3.3, 1e-3));
  // A single token's loss of 0.024 off by 4e-6 (1.7e-4 relative) is inside the floor.
  CHECK_FALSE(above_bound(loss_rule, "loss", 4e-6 / 0.024, 4e-6));
  // Without its absolute error the loss is not judged; gradients by rel L2 alone.
  CHECK_FALSE(above_bound(loss_rule, "loss", 0.5, std::nullopt));
  CHECK(above_bound(loss_rule, "grad_student_weight", 0.011, std::nullopt));
  CHECK_FALSE(above_bound(loss_rule, "grad_student_weight", 0.009, 1.0));
}
