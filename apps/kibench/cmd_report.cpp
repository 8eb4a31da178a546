// kibench report: argument parsing; the work is lib/report/.
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "apps/kibench/flag_values.hpp"
#include "lib/error.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/report/chart_files.hpp"
#include "lib/report/html_page.hpp"
#include "lib/report/report_builder.hpp"

namespace kibench::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> runs;
  std::string out = "report.html";
  std::string charts; // folder for every chart as an .svg file; empty: none
  std::string title = "kibench report";
  std::string baseline;
  std::string seed = "1";
  std::string resamples = "5000";
};

int report_command(const ReportArgs &args) {
  const std::filesystem::path out(args.out);
  if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path()))
    throw InputError(
        fmt::format("--out {}: the folder {} does not exist", args.out, out.parent_path().string()));
  if (std::filesystem::is_directory(out))
    throw InputError(fmt::format("--out {}: is a folder; name the HTML file to write", args.out));

  const std::filesystem::path charts(args.charts);
  io::require_replaceable_file(out, "--out");
  if (!args.charts.empty()) {
    if (std::filesystem::exists(charts) && !std::filesystem::is_directory(charts))
      throw InputError(fmt::format("--charts {}: is a file; name a folder for the .svg files", args.charts));
    if (const std::filesystem::path parent = charts.parent_path();
        !std::filesystem::exists(charts) && !parent.empty() && !std::filesystem::is_directory(parent))
      throw InputError(
          fmt::format("--charts {}: the folder {} does not exist", args.charts, parent.string()));
  }

  report::ReportOptions options;
  options.title = args.title;
  if (!args.baseline.empty()) options.baseline = args.baseline;
  options.bootstrap.seed = count_flag("--seed", args.seed, 0, std::numeric_limits<std::uint64_t>::max());
  options.bootstrap.resamples = count_flag("--resamples", args.resamples, 100, 1000000);
  const std::vector<std::filesystem::path> paths(args.runs.begin(), args.runs.end());
  const report::ReportModel model = report::build_report(paths, options);
  io::write_file_atomically(out, report::render_report_html(model));
  if (!args.charts.empty()) {
    std::filesystem::create_directory(charts);
    const std::vector<report::ChartFile> files = report::chart_files(model);
    for (const report::ChartFile &file : files) io::write_file_atomically(charts / file.name, file.svg);
    fmt::print("written: {} chart{} as .svg in {}\n", files.size(), files.size() == 1 ? "" : "s",
               charts.string());
  }
  fmt::print("written: {} ({} run{}, {} cohort{}, {} sweep{})\n", out.string(), model.run_count,
             model.run_count == 1 ? "" : "s", model.cohorts.size(), model.cohorts.size() == 1 ? "" : "s",
             model.sweeps.size(), model.sweeps.size() == 1 ? "" : "s");
  return 0;
}

} // namespace

void add_report(CLI::App &app, Action &action) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App *command = app.add_subcommand(
      "report",
      "Write one self-contained HTML page of charts and tables for runs (no network needed to view it).");
  command
      ->add_option("RUN", args->runs,
                   "Run manifests, run directories, imported record directories, or directories of them")
      ->required();
  command->add_option("--out", args->out,
                      "The HTML file to write (default report.html; replaced atomically)");
  command->add_option("--title", args->title, "The page's title (default \"kibench report\")");
  command->add_option("--charts", args->charts,
                      "Also write every chart as an .svg file of its own into this folder (created if "
                      "missing; files named by the chart's id)");
  command->add_option(
      "--baseline", args->baseline,
      "The run speedups are measured against, as for `kibench compare` (default: \"reference\", "
      "else \"cpu-reference\", else the first run given)");
  command->add_option("--seed", args->seed,
                      "Bootstrap seed of the speedup intervals (default 1: reproducible)");
  command->add_option("--resamples", args->resamples, "Bootstrap resamples, 100 to 1000000 (default 5000)");
  command->footer(
      R"(Runs are grouped into cohorts by comparison key, as `kibench compare` groups them. For each
cohort the page shows the median latency of every implementation with its 95 % interval, the
speedup over the baseline with its bootstrap interval, the ratio to cublas-floor, peak and
workspace memory, the errors against the fp64 oracle, and the environment. Runs of one
operation that differ only in the number of tokens T also get time-vs-T and TFLOP/s-vs-T
charts; two cohorts or more with a cublas-floor run get one chart of every run's ratio to its
floor. The page has inline CSS and SVG only: it opens offline. See docs/report.md.

Examples:
  kibench report runs/2026-01-02T10-00-00.000Z-small-v1000-h64-t32-full/ --out report.html
  kibench report runs/ --out sweep.html --title "fused vs reference, T sweep"
  kibench report runs/ --out report.html --charts docs/charts   # and each chart as an .svg

Exit codes: 0 written, 1 a digest does not match what it names, 2 unreadable or invalid input.)");
  command->callback([args, &action] { action = [args] { return report_command(*args); }; });
}

} // namespace kibench::cli
