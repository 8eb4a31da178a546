// kibench run: argument parsing and progress; the work is
// lib/run/session.cpp, the printed table lib/run/run_printer.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "apps/kibench/flag_values.hpp"
#include "apps/kibench/plugins.hpp"
#include "apps/kibench/sampling_flags.hpp"
#include "lib/error.hpp"
#include "lib/harness/power_state.hpp"
#include "lib/harness/setting_ranges.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/io/text_rules.hpp"
#include "lib/json/canonical.hpp"
#include "lib/io/output_directory.hpp"
#include "lib/run/parallel_gpus.hpp"
#include "lib/run/progress_line.hpp"
#include "lib/run/repetitions.hpp"
#include "lib/run/run_printer.hpp"
#include "lib/run/session.hpp"

namespace kibench::cli {

namespace {

// The numeric flags are kept as text and read by flag_values.hpp, which
// refuses what CLI11's conversions let through ("-1" wraps to 2^64 - 1 as a
// count, "nan" is a double).
struct RunArgs {
  std::vector<std::string> workloads;
  std::vector<std::string> implementations;
  std::string out = "runs";
  std::string pass = "full";
  SamplingFlags sampling;
  bool no_interleave = false;
  bool share_rounds = kShareRoundsByDefault;
  std::string save_tensors;
  std::vector<std::string> plugins;
  std::string isolation = "auto";
  std::string rotate_inputs = "auto";
  bool strict_calibration = false;
  bool check_only = false;
  bool time_failed = false;
  std::optional<std::string> filter;
  std::vector<std::string> labels; // at most one; a vector so that a second is refused, not replaced
  std::vector<std::string> axes;
  std::optional<std::string> lock_clocks; // none (leave them), base or max; "" is refused
  std::string gpus = "1";
  std::string repetitions = "1";
  std::optional<std::string> shard;  // --shard K/N
  std::optional<std::string> shards; // --shards N, with JOB_COMPLETION_INDEX
  bool parallel_gpus = false;
};

// The terminal's width, for a progress line that must not wrap (a wrapped
// line cannot be rewritten in place).
std::size_t terminal_columns() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 100;
}

// On a terminal the progress line rewrites itself; in a log (CI), a line at
// each phase and every 5 s while sampling (lib/run/progress_line.hpp).
ProgressCallback make_progress(bool tty) {
  auto log = std::make_shared<ProgressLog>(5.0);
  const auto started = std::chrono::steady_clock::now();
  return [tty, log, started](const Progress &p) {
    if (tty) {
      fmt::print(stderr, "\r\033[K{}", progress_line(p, terminal_columns() - 1));
      std::fflush(stderr);
      return;
    }
    const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (log->wants(p, now_s)) fmt::print(stderr, "{}\n", progress_line(p));
  };
}

// `run` again for one GPU: the arguments as given, less --parallel-gpus and
// any shard flag (each worker gets its own --shard).
std::vector<std::string> worker_arguments(const std::vector<std::string> &arguments) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    const std::string &a = arguments[k];
    if (a == "--parallel-gpus") continue;
    if (a == "--shard" || a == "--shards") {
      ++k; // and its value
      continue;
    }
    if (a.starts_with("--shard=") || a.starts_with("--shards=")) continue;
    out.push_back(a);
  }
  return out;
}

// --parallel-gpus: one `kibench run` per GPU of this machine, each on its
// own device and shard; their logs beside the run directories.
int run_parallel_gpus(const RunArgs &args, const CliContext &context, const SessionOptions &options,
                      const Backend &backend) {
  if (context.self_command.empty())
    throw InputError("--parallel-gpus: only the kibench executable starts its own workers; under python -m "
                     "kibench start one per GPU with --shard K/N and CUDA_VISIBLE_DEVICES");
  if (const auto missing = backend.gpu_unavailable_reason())
    throw InputError(fmt::format("--parallel-gpus: no GPU here: {}", *missing));
  if (args.gpus != "1") throw InputError("--parallel-gpus: each worker has one GPU; leave out --gpus");
  if (args.check_only) throw InputError("--parallel-gpus: --check-only times nothing to spread over GPUs");
  io::prepare_output_directories({{options.out_dir, "--out"}});
  const auto count = static_cast<std::size_t>(backend.gpu_count());
  const auto visible = process_environment()("CUDA_VISIBLE_DEVICES");
  std::vector<GpuWorker> workers = plan_gpu_workers(count, options.shard, visible, options.out_dir);
  std::vector<std::string> command = context.self_command;
  for (std::string &a : worker_arguments(context.arguments)) command.push_back(std::move(a));
  options.note(count == 1 ? fmt::format("--parallel-gpus: this machine has 1 GPU: one worker, shard {}",
                                        workers.front().shard.text())
                          : fmt::format("--parallel-gpus: {} GPUs, one worker each (shards {} to {} of {})", count,
                                        workers.front().shard.index, workers.back().shard.index,
                                        workers.front().shard.count));
  const int code = run_gpu_workers(command, workers);
  for (const GpuWorker &w : workers)
    fmt::print("GPU {} (CUDA_VISIBLE_DEVICES={}) shard {}: exit code {}; log {}\n", w.gpu, io::printable(w.device),
               w.shard.text(), w.exit_code, io::printable(w.log.string()));
  fmt::print("merge the shards with: kibench merge {} --out MERGED\n", io::printable(options.out_dir.string()));
  return code;
}

// Every flag in its range (setting_ranges.hpp; docs/guide.md lists them).
ProtocolSettings read_settings(const RunArgs &args) {
  ProtocolSettings s;
  s.pass = choice_flag("--pass", args.pass, pass_from_string, pass_names());
  read_sampling_flags(args.sampling, s);
  s.interleave = !args.no_interleave;
  s.share_rounds = args.share_rounds;
  s.input_rotation =
      choice_flag("--rotate-inputs", args.rotate_inputs, input_rotation_from_string, input_rotation_names());
  return s;
}

int run_command(const RunArgs &args, const CliContext &context) {
  SessionOptions options;
  options.settings = read_settings(args);
  const ProtocolSettings &s = options.settings;
  for (const auto &w : args.workloads) options.workload_files.emplace_back(w);
  options.axes = parse_axes(args.axes);
  if (args.lock_clocks) {
    options.lock_clocks =
        choice_flag("--lock-clocks", *args.lock_clocks, clock_target_from_string, clock_target_names());
  }
  options.implementations = args.implementations;
  // No implementation has a longer name; a 2 MB one is not echoed back.
  for (const std::string &name : options.implementations)
    if (name.size() > 200)
      throw InputError(fmt::format("--impl: \"{}\" is not an implementation name (at most 200 characters)",
                                   io::printable(io::excerpt(name))));
  options.out_dir = args.out;
  if (!args.save_tensors.empty()) options.save_tensors = args.save_tensors;
  if (args.labels.size() > 1)
    throw InputError(
        fmt::format("--label: given {} times; one invocation's runs share one label", args.labels.size()));
  if (!args.labels.empty()) options.label = label_flag("--label", args.labels.front());
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  // A note clears the progress line it would otherwise run into.
  options.note = [tty](const std::string &line) {
    fmt::print(stderr, "{}note: {}\n", tty ? "\r\033[K" : "", io::printable(line));
  };
  options.progress = make_progress(tty);
  // Each workload's table as soon as its directory is written, the
  // progress line cleared first.
  options.check_only = args.check_only;
  options.time_failed = args.time_failed;
  options.filter = args.filter;
  options.workload_done = [tty, check_only = args.check_only](const WorkloadOutcome &o) {
    if (tty) fmt::print(stderr, "\r\033[K");
    fmt::print("{}", check_only ? render_check_table(o) : render_run_table(o));
    flush_stdout();
  };
  // --shard, else what a job scheduler puts in the environment.
  const std::optional<std::size_t> shards =
      args.shards ? std::optional<std::size_t>(count_flag("--shards", *args.shards, 1, 1'000'000'000))
                  : std::nullopt;
  if (args.shard) {
    if (shards) throw InputError("--shards: only with JOB_COMPLETION_INDEX; --shard K/N already gives the count");
    options.shard = parse_shard(*args.shard);
  } else {
    options.shard = shard_from_environment(process_environment(), shards);
  }
  const int gpus = static_cast<int>(count_flag("--gpus", args.gpus, 1, setting_ranges::kMaxGpus));
  const plugin::Isolation isolation =
      choice_flag("--isolation", args.isolation, plugin::isolation_from_string, plugin::isolation_names());
  const auto repetitions = count_flag("--repetitions", args.repetitions, 1, setting_ranges::kMaxRepetitions);
  if (repetitions > 1 && args.check_only)
    throw InputError("--repetitions: --check-only times nothing to repeat");
  const auto backend =
      make_backend(plugin_catalog(args.plugins, context, {s.pass, s.timeout_s, isolation, {}}), gpus);
  if (args.parallel_gpus) return run_parallel_gpus(args, context, options, *backend);
  std::vector<WorkloadOutcome> outcomes;
  std::vector<std::vector<WorkloadOutcome>> by_repetition;
  for (std::uint64_t r = 1; r <= repetitions; ++r) {
    if (repetitions > 1) {
      options.extra_labels.set("repetition", fmt::format("{} of {}", r, repetitions));
      if (tty) fmt::print(stderr, "\r\033[K");
      fmt::print("{}repetition {} of {}\n", r == 1 ? "" : "\n", r, repetitions);
      flush_stdout();
    }
    by_repetition.push_back(run_session(*backend, options));
    outcomes.insert(outcomes.end(), by_repetition.back().begin(), by_repetition.back().end());
  }
  if (tty) fmt::print(stderr, "\r\033[K");
  if (repetitions > 1) fmt::print("{}", render_repetition_table(repetition_spread(by_repetition), repetitions));
  fmt::print("{}", render_failure_summary(outcomes));
  flush_stdout();
  const bool all_passed = std::all_of(outcomes.begin(), outcomes.end(),
                                      [](const WorkloadOutcome &o) { return o.no_failed_check(); });
  std::size_t uncalibrated = 0;
  for (const WorkloadOutcome &o : outcomes) uncalibrated += o.calibration_caveats.empty() ? 0 : 1;
  if (uncalibrated > 0 && args.strict_calibration) {
    fmt::print(stderr,
               "kibench: --strict-calibration: {} of {} workloads ran with the calibration sentinels outside "
               "this machine's control limits or drifting (their runs are written, marked calibration_caveat; "
               "not to be published)\n",
               uncalibrated, outcomes.size());
    return 1;
  }
  return all_passed ? 0 : 1;
}

} // namespace

void add_run(CLI::App &app, Action &action, const CliContext &context) {
  auto args = std::make_shared<RunArgs>();
  CLI::App *run = app.add_subcommand("run", "Generate inputs, check implementations against the fp64 oracle, "
                                            "time them, and write KernelIndex manifests");
  run->add_option("workloads", args->workloads,
                  "Workload files (default: the seed workload on a GPU, "
                  "workloads/small/small-v1000-h64-t32.json on a CPU)");
  run->add_option("--impl", args->implementations, "Implementations to run (see `kibench list`)")
      ->delimiter(',');
  run->add_option("--out", args->out, "Parent folder of the run directories")->capture_default_str();
  run->add_option("--pass", args->pass, "Timed pass: forward, backward or full")->capture_default_str();
  add_sampling_options(*run, args->sampling);
  run->add_option("--save-tensors", args->save_tensors,
                  "Write inputs and every implementation's outputs as .npy files (with index.json) here");
  run->add_option("--shard", args->shard,
                  "Run shard K of N (K from 0 to N - 1): the points (workloads as expanded by --axis, then "
                  "--filter) whose index i has i mod N = K; without it, SLURM_ARRAY_TASK_ID/COUNT, "
                  "JOB_COMPLETION_INDEX (with --shards) or TEST_SHARD_INDEX/TEST_TOTAL_SHARDS give it; "
                  "`kibench merge` joins the shards (docs/guide.md, \"Sharding\")");
  run->add_flag("--parallel-gpus", args->parallel_gpus,
                "Run one worker process per GPU of this machine, each on its own GPU and shard (within the "
                "scheduler's shard, where one is given); their logs go beside the run directories, and "
                "`kibench merge` joins them");
  run->add_option("--shards", args->shards,
                  "The shard count of a Kubernetes Indexed Job (its completions), beside JOB_COMPLETION_INDEX");
  run->add_option("--axis", args->axes,
                  "Sweep: run each workload at every combination of these axis values instead, e.g. "
                  "tokens=1024,2048 or tokens=1024:8192:pow2 or vocab=32000:128000:32000; repeatable, one "
                  "per axis (tokens, vocab, hidden)")
      ->type_name("NAME=VALUES")
      ->allow_extra_args(false);
  run->add_option(
         "--lock-clocks", args->lock_clocks,
         "Lock the GPU's SM clock for the run at its base (TDP) or maximum clock, as NVBench's --lgc; "
         "needs root; reset when the run ends or is interrupted")
      ->type_name("base|max");
  run->add_option(
         "--label", args->labels,
         "Name this invocation's runs (e.g. main, pr-123): written into every BenchmarkRun and shown "
         "by compare and report in place of [1], [2]; once per run")
      ->type_name("NAME")
      ->allow_extra_args(false);
  run->add_flag("--no-interleave", args->no_interleave, "Time implementations one after another");
  run->add_flag("--share-rounds,!--own-rounds", args->share_rounds,
                "--share-rounds (the default): every implementation samples in every round until the last "
                "one stops, so paired comparisons and the medians beside them come from the same rounds; "
                "--own-rounds: each stops at its own rule (docs/protocol.md)");
  run->add_option(
         "--gpus", args->gpus,
         fmt::format("GPUs the run holds, devices 0 to N-1 (1 to {}): single-GPU implementations run "
                     "on device 0, fused-vocab-parallel shards the LM heads over all N through NCCL",
                     setting_ranges::kMaxGpus))
      ->type_name("N")
      ->capture_default_str();
  run->add_option("--plugin", args->plugins,
                  "A plugin library (include/kibench/kibench_plugin.h) whose implementations --impl may name; "
                  "repeatable");
  run->add_option("--isolation", args->isolation,
                  "Where plugin and Python implementations run: auto (the default) and process put each in a "
                  "worker process of its own, with its own CUDA context on a GPU; in-process keeps them in "
                  "kibench's; a worker that crashes, exits or hangs fails its lane alone (docs/protocol.md)")
      ->type_name("auto|process|in-process")
      ->capture_default_str();
  run->add_option("--filter", args->filter,
                  "Run only the WORKLOAD/IMPLEMENTATION pairs this regular expression finds a match in, e.g. "
                  "fused or 'tau2.*/numpy' (the oracle always runs; workloads left with none are skipped)")
      ->type_name("REGEX");
  run->add_option("--repetitions", args->repetitions,
                  "Run the whole invocation N times, each repetition its own run directories (labelled "
                  "repetition: k of N), then print how each median moved from one to the next: mean, "
                  "standard deviation, coefficient of variation (google/benchmark's --benchmark_repetitions)")
      ->type_name("N")
      ->capture_default_str();
  run->add_flag("--check-only", args->check_only,
                "Check each implementation against the oracle once (one invocation on poisoned outputs) and "
                "print the verdicts: nothing timed, nothing written (as nvbench --run-once; handy under a "
                "profiler)");
  run->add_flag("--time-failed", args->time_failed,
                "Keep sampling a lane that failed its check like the others (by default it is timed only to "
                "--min-samples: its time is not the time of a correct result)");
  run->add_flag("--strict-calibration", args->strict_calibration,
                "Exit 1 when the calibration sentinels (timed at the start and after each workload) fall outside "
                "this machine's control limits or drift during a workload; the runs are still written, marked "
                "(docs/protocol.md)");
  run->add_option("--rotate-inputs", args->rotate_inputs,
                  "Time each implementation on two of the workload's input sets, alternating by sample, and "
                  "check its outputs against each set's oracle answer, so that outputs computed for other "
                  "inputs fail: auto (the default: every implementation in a worker process, see --isolation), "
                  "off (docs/protocol.md)")
      ->type_name("auto|off")
      ->capture_default_str();
  run->footer(R"(Exit codes: 0 all checked outputs passed, 1 an implementation failed (its check, or it
raised an error, returned outputs of the wrong shape or type, ran out of time or memory), 2 bad input (a
flag out of its range, a workload, a plugin, an --out or --save-tensors folder that cannot be written:
refused before any work).

Examples:
  kibench run                                   # default workload and implementations
  kibench run workloads/small/*.json --impl cpu-reference --out runs
  kibench run workloads/seed-distill-jsd-h4096-t8192-v128256.json --impl fused,cublas-floor --pass forward
  kibench run --hot --min-samples 50 --max-noise 0.2%
  kibench run workloads/small/small-v1000-h64-t32.json --save-tensors tensors/
  kibench run --impl fused,cublas-floor --axis tokens=1024:8192:pow2 --axis vocab=32000,128256
  kibench run --label main --out runs/main     # compare shows fused[main] beside fused[pr-7]
  kibench run workloads/small/small-v1000-h64-t32.json --plugin build/examples/plugin/libkibench_example_plugin.so \
      --impl cpu-reference,example-cpu-fp32)");
  run->callback(
      [args, &action, &context] { action = [args, &context] { return run_command(*args, context); }; });
}

} // namespace kibench::cli
