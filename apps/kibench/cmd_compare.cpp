// kibench compare: argument parsing and printing; the work is lib/compare/.
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "apps/kibench/flag_values.hpp"
#include "lib/compare/compare.hpp"
#include "lib/compare/json_printer.hpp"
#include "lib/compare/markdown_printer.hpp"
#include "lib/compare/regression_gate.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/compare/table_printer.hpp"
#include "lib/error.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> runs;
  std::string baseline;
  std::string format = "table";
  std::string fail_if_slower; // empty: no gate
  std::string seed = "1";
  std::string resamples = "5000";
  bool allow_environment_drift = false;
  bool verbose = false;
};

int compare_command(const CompareArgs &args) {
  std::vector<std::filesystem::path> paths(args.runs.begin(), args.runs.end());
  compare::CompareOptions options;
  if (!args.baseline.empty()) options.baseline = args.baseline;
  // Every numeric flag is range-checked by flag_values (nan and inf are
  // refused: a nan threshold passed every regression).
  options.bootstrap.seed = count_flag("--seed", args.seed, 0, std::numeric_limits<std::uint64_t>::max());
  options.bootstrap.resamples = count_flag("--resamples", args.resamples, 100, 1000000);
  if (!args.fail_if_slower.empty())
    options.fail_if_slower_percent =
        number_flag("--fail-if-slower", args.fail_if_slower, 0.0, 1e6, true, "percent");
  options.allow_environment_drift = args.allow_environment_drift;
  const compare::CompareReport report = compare::compare_runs(compare::load_runs(paths), options);

  if (args.format == "json") {
    fmt::print("{}\n", json::pretty(compare::report_document(report)));
  } else if (args.format == "markdown") {
    fmt::print("{}", compare::render_markdown(report));
  } else {
    fmt::print("{}", compare::render_table(report, args.verbose));
  }
  flush_stdout();
  if (report.gate && !report.gate->passed()) throw CheckFailed(compare::gate_summary(report, *report.gate));
  return 0;
}

} // namespace

void add_compare(CLI::App &app, Action &action) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App *command = app.add_subcommand(
      "compare", "Rank runs of one cohort with bootstrap intervals; say why others are not comparable.");
  command
      ->add_option("RUN", args->runs,
                   "Run manifests, run directories, imported record directories, or directories of them")
      ->required();
  command->add_option(
      "--baseline", args->baseline,
      "The run candidates are measured against: an implementation name, run id, run name, run "
      "digest (prefix), run file or directory (default: \"reference\", else \"cpu-reference\", "
      "else the first run given)");
  command->add_option("--format", args->format, "Output: table (default), markdown (CI job summaries), json")
      ->check(CLI::IsMember({"table", "markdown", "json"}));
  command
      ->add_option("--fail-if-slower", args->fail_if_slower,
                   "Exit 1 when a candidate is significantly slower than its baseline (interval above zero) "
                   "by more than PCT percent")
      ->type_name("PCT");
  command->add_option("--seed", args->seed, "Bootstrap seed (default 1: output is reproducible)");
  command->add_option("--resamples", args->resamples, "Bootstrap resamples, 100 to 1000000 (default 5000)");
  command->add_flag("--verbose,-v", args->verbose,
                    "With several cohorts (a multi-workload run): every cohort in full, and each run outside the "
                    "baseline's cohort viewed against it, before the summary table");
  command->add_flag("--allow-environment-drift", args->allow_environment_drift,
                    "Rank runs whose environments differ only in kernel, driver, CUDA, OS, compiler or "
                    "library patch levels (never GPU, architecture, power limit or a major version) in one "
                    "cohort, each verdict carrying the difference as a caveat (docs/compare.md)");
  command->footer(R"(Runs are grouped into cohorts by comparison key (operation, workload, protocol,
environment, correctness policy, metric). Inside a cohort, each candidate gets a 95 %
bootstrap interval of its difference of medians from the baseline — paired by interleave
round when both come from one `kibench run` — and a speedup with its interval. A strict
winner needs the interval to exclude zero and the effect to exceed both the protocol's
minimum effect (1 % by default) and the measured noise floor; otherwise ranks are shared.
Runs that cannot be ranked are listed with reason codes (WORKLOAD_MISMATCH, ...); those of
the same operation also get a labelled source_native / compatible_workload view — a ratio
of medians for discovery, never a ranking. A protocol or environment that differs is named
field by field (maxSamples 300 ≠ 1000, software.kernel 6.8.0-45 ≠ 6.8.0-48). See docs/compare.md.

Examples:
  kibench compare runs/2026-01-02T10-00-00.000Z-small-v1000-h64-t32-full/
  kibench compare main/run.fused.json pr/run.fused.json --fail-if-slower 3
  kibench compare runs/a/ runs/b/ imported/liger-row/ --format markdown >> "$GITHUB_STEP_SUMMARY"
  kibench compare main/run.fused.json pr/run.fused.json --allow-environment-drift --fail-if-slower 3

Exit codes: 0 done (gate passed), 1 regression gate failed or a digest does not match,
2 unreadable or invalid input.)");
  command->callback([args, &action] { action = [args] { return compare_command(*args); }; });
}

} // namespace kibench::cli
