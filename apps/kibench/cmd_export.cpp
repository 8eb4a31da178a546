// kibench export: argument parsing and printing; the work is lib/export/.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/error.hpp"
#include "lib/export/exported_run.hpp"
#include "lib/export/liger_csv.hpp"
#include "lib/export/submission_bundle.hpp"
#include "lib/export/tidy_csv.hpp"
#include "lib/importers/liger/curated_tables.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/io/terminal_text.hpp"

namespace kibench::cli {
namespace {

struct ExportArgs {
  std::vector<std::string> runs;
  std::string format = "csv";
  std::string out; // empty: stdout
  std::string curated;
};

int export_command(const ExportArgs &args) {
  const std::filesystem::path out(args.out);
  if (!args.out.empty()) {
    if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path()))
      throw InputError(
          fmt::format("--out {}: the folder {} does not exist", args.out, out.parent_path().string()));
    if (std::filesystem::is_directory(out))
      throw InputError(fmt::format("--out {}: is a folder; name the file to write", args.out));
    io::require_replaceable_file(out, "--out");
  }
  const std::vector<std::filesystem::path> paths(args.runs.begin(), args.runs.end());
  const std::vector<exports::ExportedRun> runs = exports::load_exported_runs(paths);

  std::string text;
  std::vector<std::string> notes;
  std::string what;
  if (args.format == "liger-csv") {
    const std::filesystem::path curated = args.curated.empty()
                                              ? importers::liger::CuratedTables::default_directory()
                                              : std::filesystem::path(args.curated);
    exports::LigerCsv csv = exports::render_liger_csv(runs, curated);
    text = std::move(csv.text);
    notes = std::move(csv.notes);
    what = fmt::format("{} row{}", csv.rows, csv.rows == 1 ? "" : "s");
  } else if (args.format == "kernelindex-submission") {
    exports::SubmissionBundle bundle = exports::render_submission(runs);
    text = std::move(bundle.text);
    notes = std::move(bundle.warnings);
    what = fmt::format("{} run{}", runs.size(), runs.size() == 1 ? "" : "s");
  } else {
    text = exports::render_tidy_csv(runs);
    what = fmt::format("{} row{}", runs.size(), runs.size() == 1 ? "" : "s");
  }
  // What loading found against a run (its reported median disagreeing with
  // its raw samples, which the CSVs use instead; a submission keeps the
  // manifests as recorded, so it carries them as they are).
  for (const auto &run : runs)
    for (const auto &caveat : run.compared.caveats)
      notes.push_back(fmt::format("{}: {}", run.compared.label, caveat));
  for (const auto &note : notes) fmt::print(stderr, "kibench export: note: {}\n", io::printable(note));
  if (args.out.empty()) {
    fmt::print("{}", text);
    flush_stdout();
  } else {
    io::write_file_atomically(out, text);
    fmt::print("written: {} ({}, {})\n", out.string(), args.format, what);
  }
  return 0;
}

} // namespace

void add_export(CLI::App &app, Action &action) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App *command = app.add_subcommand(
      "export", "Write runs as a tidy CSV, as Liger-Kernel's benchmark CSV, or as a KernelIndex submission.");
  command
      ->add_option("RUN", args->runs,
                   "Run manifests, run directories, imported record directories, or directories of them")
      ->required();
  command
      ->add_option("--format", args->format,
                   "csv (one tidy row per run, the default), liger-csv (Liger-Kernel's "
                   "all_benchmark_data.csv columns), kernelindex-submission (one YAML bundle for "
                   "KernelIndex's registry/submissions/)")
      ->check(CLI::IsMember({"csv", "liger-csv", "kernelindex-submission"}));
  command->add_option("--out", args->out, "The file to write (default: standard output)")->type_name("FILE");
  command
      ->add_option("--curated", args->curated,
                   "liger-csv: the curated Liger manifests that name its kernels (default: "
                   "$KIBENCH_LIGER_DATA, else kernelindex/liger of the workloads folder, else of "
                   "kibench's data)")
      ->type_name("DIR");
  command->footer(R"(RUN arguments are read as `kibench compare` reads them: every digest reference
resolved, raw samples checked against their sha256. Numbers in the CSVs are written as JSON
writes them; `liger-csv` leaves out runs that did not pass or that Liger's format cannot hold
(saying why on stderr); `kernelindex-submission` writes every manifest as recorded, so digests
stay what they were, and lists licences and raw-sample files in its header. docs/guide.md
("kibench export") lists the columns.

Examples:
  kibench export runs/*/ --out runs.csv
  kibench export runs/*/ --format liger-csv --out all_benchmark_data.csv
  kibench export runs/<run>/ --format kernelindex-submission --out kibench-h200.yaml

Exit codes: 0 written, 1 a digest does not match what it names, 2 unreadable or invalid
input (nothing is written).)");
  command->callback([args, &action] { action = [args] { return export_command(*args); }; });
}

} // namespace kibench::cli
