// `kibench import liger CSV`: Liger-Kernel benchmark rows as KernelIndex
// records, one self-contained directory per run. `kibench import external
// RESULT --like RUN_DIR`: an external harness's samples as one run
// directory beside a `kibench run` one. The imports themselves live in
// lib/importers/; this file parses flags and prints.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/error.hpp"
#include "lib/importers/external/external_import.hpp"
#include "lib/importers/liger/liger_import.hpp"
#include "lib/importers/record_writer.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::cli {
namespace {

using importers::liger::ImportReport;
using importers::liger::SkipReason;

struct LigerImportOptions {
  std::string csv;
  std::string out = "imported";
  std::string curated;
  bool strict = false;
  bool json = false;
};

void print_row_message(const std::string &source, const importers::liger::SkippedRow &row) {
  // The message quotes CSV fields, which may hold escape sequences, NULs or
  // line breaks: shown escaped, one line per row.
  fmt::print(stderr, "{}:{}: {}: {}\n", io::printable(source), row.line,
             importers::liger::is_row_problem(row.reason) ? "error" : "note", io::printable(row.message));
}

void print_summary(const ImportReport &report, const std::filesystem::path &out) {
  fmt::print("{}: {} rows read\n", io::printable(report.source), report.rows_read);
  if (report.runs.empty()) {
    fmt::print("  imported  0 (nothing written)\n");
  } else {
    fmt::print("  imported  {} -> {}/<run name>/\n", report.runs.size(), io::printable(out.string()));
  }
  fmt::print("  skipped   {}\n", report.skipped_total());
  for (const SkipReason reason : importers::liger::kAllSkipReasons) {
    const auto it = report.skipped.find(reason);
    fmt::print("    {:<36}{:>6}\n", importers::liger::describe(reason),
               it == report.skipped.end() ? 0 : it->second);
  }
}

json::Value summary_json(const ImportReport &report, const std::filesystem::path &out) {
  json::Object skipped;
  for (const SkipReason reason : importers::liger::kAllSkipReasons) {
    const auto it = report.skipped.find(reason);
    skipped.set(std::string(importers::liger::key(reason)), it == report.skipped.end() ? 0 : it->second);
  }
  json::Array runs;
  for (const auto &record : report.runs) {
    runs.emplace_back(json::Object{{"line", record.line},
                                   {"directory", (out / record.name).string()},
                                   {"externalId", record.external_id},
                                   {"runDigest", record.run_digest},
                                   {"comparisonKey", record.comparison_key}});
  }
  json::Array problems;
  for (const auto &row : report.skipped_rows) {
    problems.emplace_back(json::Object{{"line", row.line},
                                       {"reason", std::string(importers::liger::key(row.reason))},
                                       {"message", row.message}});
  }
  return json::Object{{"source", report.source},           {"out", out.string()},
                      {"rowsRead", report.rows_read},      {"imported", report.runs.size()},
                      {"skipped", std::move(skipped)},     {"runs", std::move(runs)},
                      {"skippedRows", std::move(problems)}};
}

int import_liger(const LigerImportOptions &options) {
  const std::filesystem::path curated = options.curated.empty()
                                            ? importers::liger::CuratedTables::default_directory()
                                            : std::filesystem::path(options.curated);
  const auto tables = importers::liger::load_jsd_family_tables(curated);
  const std::filesystem::path out(options.out);
  // Records go to disk as they are made; they appear under --out only at
  // commit(), and all of them are removed again on any error below.
  importers::RecordBatch batch(out);
  const ImportReport report = importers::liger::import_liger_csv(
      options.csv, tables,
      [&batch](importers::liger::ImportedRecord &&record) {
        batch.add(importers::liger::record_directory(std::move(record)));
      },
      [&options](const importers::liger::SkippedRow &row) { print_row_message(options.csv, row); });
  if (options.strict && report.row_problems() > 0) {
    throw InputError(fmt::format("{}: {} of {} rows skipped for a problem (above); --strict: nothing written",
                                 report.source, report.row_problems(), report.rows_read));
  }
  batch.commit();
  if (options.json) {
    fmt::print("{}\n", json::pretty(summary_json(report, out)));
  } else {
    print_summary(report, out);
  }
  return 0;
}

struct ExternalImportOptions {
  std::string result;
  std::string like;
  std::string out = "imported";
  bool json = false;
};

json::Value external_summary_json(const importers::external::ExternalImport &imported,
                                  const std::filesystem::path &out) {
  json::Array runs;
  for (const auto &run : imported.runs) {
    const ImplementationOutcome &o = run.outcome;
    runs.emplace_back(
        json::Object{{"implementation", o.facts.name},
                     {"kibenchImplementation", run.kibench_implementation},
                     {"status", to_string(o.facts.status)},
                     {"samples", static_cast<std::uint64_t>(o.result.latency_ns.count)},
                     {"medianMs", o.result.latency_ns.median * 1e-6},
                     {"file", (imported.directory / fmt::format("run.{}.json", o.facts.name)).string()},
                     {"runDigest", o.run_digest},
                     {"comparisonKey", run.comparison_key}});
  }
  return json::Object{
      {"source", imported.source},
      {"out", out.string()},
      {"directory", imported.directory.string()},
      {"harness", json::Object{{"name", imported.harness_name}, {"version", imported.harness_version}}},
      {"invocation", imported.invocation},
      {"workload", imported.workload_name},
      {"protocolDigest", imported.protocol_digest},
      {"runs", std::move(runs)}};
}

int import_external(const ExternalImportOptions &options) {
  const std::filesystem::path out(options.out);
  const auto imported = importers::external::import_external(options.result, options.like, out);
  if (options.json) {
    fmt::print("{}\n", json::pretty(external_summary_json(imported, out)));
  } else {
    fmt::print("{}: {} runs by {} {} (invocation {})\n", io::printable(imported.source), imported.runs.size(),
               imported.harness_name, io::printable(imported.harness_version), imported.invocation);
    for (const auto &run : imported.runs)
      fmt::print("  {:<20} {:>12.3f} ms  {}\n", run.outcome.facts.name,
                 run.outcome.result.latency_ns.median * 1e-6, to_string(run.outcome.facts.status));
    fmt::print("written: {}/\n", io::printable(imported.directory.string()));
  }
  // As `kibench run`: the directory records a failed check, the exit code
  // reports it.
  return imported.all_passed() ? 0 : 1;
}

void add_import_external(CLI::App &command, Action &action) {
  CLI::App *external = command.add_subcommand(
      "external", "Import samples an external harness (one using kibench's C API, include/kibench/kibench.h) took "
                  "with kibench's "
                  "measurement method, beside the `kibench run` directory whose oracle it checked against.");
  auto options = std::make_shared<ExternalImportOptions>();
  external
      ->add_option("RESULT", options->result, "The harness's result (format kibench.dev/external-samples/v1)")
      ->required();
  external
      ->add_option(
          "--like", options->like,
          "The `kibench run` directory of the same workload and machine: its operation, workload and "
          "environment are copied, its oracle and implementation revisions used")
      ->required();
  external->add_option("--out", options->out, "Parent folder of the imported run directory")
      ->capture_default_str();
  external->add_flag("--json", options->json,
                     "Print the summary as JSON (runs with digests and comparison key)");
  external->footer(
      R"(Writes <out>/<invocation>-<workload>-<pass>-side-by-side/: operation.json, workload.json,
environment.json (copied from RUN_DIR), protocol.json (the same method under the harness's
name: one family with kibench run's, another digest), and per implementation
implementation.<name>.json, run.<name>.json, samples.<name>.json, plus summary.json.
`kibench digest --verify` checks it; `kibench compare RUN_DIR DIR` ranks the imported runs
among themselves (paired by round) and shows kibench run's beside them. docs/import.md
has the format and the rules.

Examples:
  kibench import external side_by_side.json --like runs/2026-12-02T14-17-03.117Z-distill-jsd-loss-hidden4096-tokens8192-vocab128256-bf16-full
  kibench import external side_by_side.json --like runs/<run>/ --out imported --json

Exit codes: 0 imported, every run passed its check; 1 imported, a run failed its check
(recorded as incorrect_numerical); 2 a bad result file, a digest that does not match
RUN_DIR, or an existing directory (nothing written).)");
  external->callback([options, &action] { action = [options] { return import_external(*options); }; });
}

} // namespace

void add_import(CLI::App &app, Action &action) {
  CLI::App *command =
      app.add_subcommand("import", "Turn another benchmark's published results into KernelIndex "
                                   "records.");
  command->require_subcommand(1);
  CLI::App *liger = command->add_subcommand(
      "liger", "Import the JSD-family speed rows of Liger-Kernel's benchmark CSV (all_benchmark_data.csv).");
  auto options = std::make_shared<LigerImportOptions>();
  liger->add_option("CSV", options->csv, "Liger-Kernel benchmark CSV (benchmark/data/all_benchmark_data.csv)")
      ->required();
  liger->add_option("--out", options->out, "Directory that receives one directory per imported run")
      ->capture_default_str();
  liger->add_flag(
      "--strict", options->strict,
      "Any row skipped for a problem (malformed, unknown GPU or provider, does not bind, run name "
      "taken) fails the import: exit 2, nothing written");
  liger->add_flag("--json", options->json, "Print the summary as JSON (runs with digests, skipped rows)");
  liger->add_option("--curated", options->curated,
                    "Directory of KernelIndex's curated Liger manifests (default: $KIBENCH_LIGER_DATA, else "
                    "kernelindex/liger of the workloads folder, else of kibench's data: share/kibench/workloads "
                    "beside the binary or in its install prefix)");
  liger->footer(R"(Rows of jsd, fused_linear_jsd and distill_jsd_loss become records with the digests
KernelIndex publishes for them. Each run's directory, named after its metadata.name, holds
run.json, workload.json, operation.json, protocol.json, environment.json,
implementation.json and project.json; `kibench digest --verify DIR` checks it and prints
its comparison key. Directories appear whole; nothing is written if one already exists.

Memory rows, other kernels, duplicate external ids and non-finite medians are skipped
and counted. A row with a problem (bad CSV quoting, a bad number, config JSON that does
not parse, an unknown GPU or provider, values that do not bind the kernel's operation)
is reported as FILE:LINE, skipped and counted; the import of the other rows goes on
unless --strict. docs/import.md has the rules.

Examples:
  kibench import liger all_benchmark_data.csv
  kibench import liger all_benchmark_data.csv --out records/liger --strict
  kibench import liger test/data/liger/jsd-family-rows.csv --json
  kibench digest --verify imported/liger-distill-jsd-loss-full-torch-nvidia-h100-80gb-hbm3-hidden4096-tokens8192-vocab128256-bf16-2024-

Exit codes: 0 imported (skipped rows are reported, not fatal), 2 unreadable CSV, missing
column, an existing run directory, or any problem row with --strict (nothing written).)");
  liger->callback([options, &action] { action = [options] { return import_liger(*options); }; });
  add_import_external(*command, action);
}

} // namespace kibench::cli
