// kibench reproduce RECORD...: argument parsing and printing; the work is
// lib/reproduce/ (reproduce.hpp), the rule in docs/reproduce.md.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "apps/kibench/flag_values.hpp"
#include "apps/kibench/plugins.hpp"
#include "apps/kibench/sampling_flags.hpp"
#include "lib/error.hpp"
#include "lib/harness/power_state.hpp"
#include "lib/harness/setting_ranges.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/canonical.hpp"
#include "lib/reproduce/reproduce.hpp"
#include "lib/run/progress_line.hpp"

namespace kibench::cli {
namespace {

// The sampling flags are `kibench run`'s, with its defaults; the pass is
// the record's.
struct ReproduceArgs {
  std::vector<std::string> records;
  std::string out = "reproduced";
  std::string tolerance = "5%";
  std::string evidence_url;
  SamplingFlags sampling;
  std::string lock_clocks;
  std::vector<std::string> labels;
  std::vector<std::string> plugins;
  bool json = false;
};

ProtocolSettings read_settings(const ReproduceArgs &args) {
  ProtocolSettings s;
  s.share_rounds = kShareRoundsByDefault; // as `kibench run` without --own-rounds
  read_sampling_flags(args.sampling, s);
  return s;
}

int reproduce_command(const ReproduceArgs &args, const CliContext &context) {
  reproduce::ReproduceOptions options;
  for (const auto &r : args.records) options.records.emplace_back(r);
  options.out_dir = args.out;
  options.settings = read_settings(args);
  options.tolerance = fraction_flag("--tolerance", args.tolerance, 0.5);
  if (!(options.tolerance > 0.0)) throw InputError("--tolerance: must be above 0");
  options.evidence_url = args.evidence_url;
  if (!args.lock_clocks.empty()) {
    options.lock_clocks =
        choice_flag("--lock-clocks", args.lock_clocks, clock_target_from_string, clock_target_names());
  }
  if (args.labels.size() > 1) throw InputError(fmt::format("--label: given {} times", args.labels.size()));
  if (!args.labels.empty()) options.label = label_flag("--label", args.labels.front());
  options.note = [](const std::string &line) { fmt::print(stderr, "note: {}\n", io::printable(line)); };
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  options.progress = [tty](const Progress &p) {
    if (tty) {
      fmt::print(stderr, "\r\033[K{}", progress_line(p, 99));
      std::fflush(stderr);
    }
  };
  const double timeout_s = options.settings.timeout_s;
  const auto backend_for = [&args, &context, timeout_s](Pass pass) {
    return make_backend(plugin_catalog(args.plugins, context, {pass, timeout_s, plugin::Isolation::automatic, {}}), 1);
  };
  bool any_failed = false;
  reproduce::reproduce_records(backend_for, options, [&](const reproduce::ReproduceOutcome &o) {
    if (tty) fmt::print(stderr, "\r\033[K");
    any_failed = any_failed || o.check_failed;
    if (args.json) {
      json::Object line{{"directory", o.directory.string()},
                        {"verdict", reproduce::verdict_json(o.verdict)},
                        {"attestation", o.attestation}};
      fmt::print("{}\n", json::canonical(line));
    } else {
      // Names and differences come from the record: each line made safe to print.
      const std::string text = reproduce::verdict_text(o.verdict);
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        fmt::print("{}\n", io::printable(std::string_view(text).substr(at, end - at)));
        at = end + 1;
      }
      fmt::print("written: {}/ (verdict.json, attestation.json)\n", io::printable(o.directory.string()));
    }
    std::fflush(stdout);
  });
  return any_failed ? 1 : 0;
}

} // namespace

void add_reproduce(CLI::App &app, Action &action, const CliContext &context) {
  auto args = std::make_shared<ReproduceArgs>();
  CLI::App *cmd = app.add_subcommand(
      "reproduce",
      "Rerun a KernelIndex BenchmarkRun here (its implementation, workload and pass) and write a "
      "verdict and KernelIndex's attestation request body");
  cmd->add_option(
         "records", args->records,
         "Records: a kibench run directory or run.<impl>.json, an imported record's directory "
         "(kibench import liger), or a file of manifests (a KernelIndex record's canonical manifest)")
      ->required();
  cmd->add_option("--out", args->out, "Parent folder of the reproduction directories")->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance,
                  "Largest deviation of the ratio of medians (its interval's far end) still 'reproduced': a "
                  "fraction or a percentage")
      ->type_name("FRACTION")
      ->capture_default_str();
  cmd->add_option("--evidence-url", args->evidence_url,
                  "An https:// URL where the evidence is published (attestation.json's evidenceUrl)")
      ->type_name("URL");
  cmd->add_flag("--json", args->json,
                "Print one JSON object per record: its directory, verdict and attestation");
  add_sampling_options(*cmd, args->sampling);
  cmd->add_option("--lock-clocks", args->lock_clocks, "As kibench run")->type_name("base|max");
  cmd->add_option("--label", args->labels, "As kibench run: names the runs written")
      ->type_name("NAME")
      ->allow_extra_args(false);
  cmd->add_option("--plugin", args->plugins,
                  "A plugin library whose implementations a record may name; repeatable");
  cmd->footer(R"(The verdict (docs/reproduce.md): the ratio of medians here / in the record, with a 95 %
bootstrap interval where both have raw samples; "reproduced within X %" only on the same GPU SKU, and only
while X, the interval's far end from 1 (or the ratio's, without an interval), is within --tolerance;
otherwise could_not_reproduce, or on another SKU an environment_note ("measured on another environment").
Each reproduced BenchmarkRun carries the label reproduces_run: <the record's digest>.

Exit codes: 0 reproduced and judged (whatever the verdict), 1 the run here failed its check or raised an
error, 2 bad input (a record kibench cannot resolve: the message names the field; an --out that cannot be
written; an implementation that cannot run here): refused before any work, nothing written.

Examples:
  kibench reproduce runs/<run>/ --out reproduced
  kibench import liger all_benchmark_data.csv --out imported
  python -m kibench reproduce imported/liger-distill-jsd-loss-full-liger-nvidia-h100-80gb-hbm3-hidden4096-tokens8192-vocab128256-bf16-2024-/
  python -m kibench reproduce test/data/seed/seed-record.json --out reproduced   # the seed record (torch-eager))");
  cmd->callback(
      [args, &action, &context] { action = [args, &context] { return reproduce_command(*args, context); }; });
}

} // namespace kibench::cli
