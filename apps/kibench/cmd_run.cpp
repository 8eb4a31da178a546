// kibench run: argument parsing and the printed table; the work is
// lib/run/session.cpp.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <unistd.h>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "apps/kibench/flag_values.hpp"
#include "lib/error.hpp"
#include "lib/harness/setting_ranges.hpp"
#include "lib/io/terminal_text.hpp"
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
  bool hot = false;
  std::string min_samples = "10";
  std::string max_samples = "1000";
  std::string min_time = "0.5";
  std::string max_noise = "0.005";
  std::string timeout = "60";
  std::string warmup = "3";
  bool no_interleave = false;
  std::string sustained = "1";
  std::string save_tensors;
};

std::string human_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b * 1e-9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b * 1e-6);
  return fmt::format("{:.1f} kB", b * 1e-3);
}

std::string error_cell(const WorkloadOutcome &, const ImplementationOutcome &i) {
  if (!i.verdict) return "not checked (no loss)";
  double worst = 0;
  for (const auto &e : i.verdict->outputs) worst = std::max(worst, e.rel_l2_error);
  return fmt::format("{} (max rel {:.1e})", i.verdict->passed ? "passed" : "FAILED", worst);
}

// The sustained phase: back to back, warm, with the board's power.
void print_sustained(const WorkloadOutcome &o) {
  bool header = false;
  for (const auto &i : o.implementations) {
    const auto &m = i.measurement.sustained;
    if (!m) continue;
    if (!header) {
      fmt::print("\nback to back, warm (board energy counter):\n");
      fmt::print("{:<14} {:>11} {:>7} {:>8} {:>7} {:>9} {:>8}\n", "implementation", "ms each", "n", "TFLOP/s",
                 "watts", "J each", "SM MHz");
      header = true;
    }
    const auto &p = m->power;
    // The cold median's TFLOP/s scaled to the sustained time: same FLOPs.
    const double tflops = m->latency_ns > 0 ? i.tflops * i.latency_ns.median / m->latency_ns : 0.0;
    fmt::print("{:<14} {:>11.3f} {:>7} {:>8.3g} {:>7} {:>9} {:>8}\n", i.name, m->latency_ns * 1e-6,
               m->invocations, tflops, p ? fmt::format("{:.0f}", p->power_w) : "–",
               p ? fmt::format("{:.3g}", *m->energy_j()) : "no step",
               p && p->sm_clock_mhz ? fmt::format("{:.0f}", *p->sm_clock_mhz) : "–");
  }
}

// Every median against the tensor cores' own floor, where it ran.
void print_tensor_floor(const WorkloadOutcome &o, const ImplementationOutcome *tensor_floor) {
  if (tensor_floor == nullptr || !(tensor_floor->latency_ns.median > 0)) return;
  std::string ratios;
  for (const auto &i : o.implementations)
    if (&i != tensor_floor)
      ratios += fmt::format("{}{} {:.2f}×", ratios.empty() ? "" : ", ", i.name,
                            i.latency_ns.median / tensor_floor->latency_ns.median);
  if (!ratios.empty())
    fmt::print("\n÷ wgmma-floor (the tensor cores alone, {:.3f} ms): {}\n",
               tensor_floor->latency_ns.median * 1e-6, ratios);
}

void print_outcome(const WorkloadOutcome &o) {
  const auto [reference, floor, tensor_floor] = reference_points(o);
  const Workload &w = o.workload;
  fmt::print("\n{}  (T={} V={} H={} Hs={}, β={} τ={}; {:.2f} TFLOP of GEMMs per full pass)\n", w.name,
             w.tokens, w.vocab, w.hidden, w.student_hidden, w.scalars.beta, w.scalars.temperature,
             w.gemm_flops(true) * 1e-12);
  fmt::print("checked against {} (loss {:.9g})\n\n", o.oracle, o.oracle_loss);
  fmt::print("{:<14} {:>11} {:>19} {:>7} {:>9} {:>8} {:>8} {:>10} {:>10}  {}\n", "implementation",
             "median ms", "p20–p80 ms", "n", "vs ref", "÷ floor", "TFLOP/s", "peak", "workspace",
             "correctness");
  for (const auto &i : o.implementations) {
    const auto &s = i.latency_ns;
    const std::string speedup =
        reference && reference != &i ? fmt::format("{:.2f}×", reference->latency_ns.median / s.median) : "–";
    const std::string to_floor =
        floor && floor != &i ? fmt::format("{:.2f}", s.median / floor->latency_ns.median) : "–";
    fmt::print("{:<14} {:>11.3f} {:>19} {:>7} {:>9} {:>8} {:>8.3g} {:>10} {:>10}  {}\n", i.name,
               s.median * 1e-6, fmt::format("{:.3f}–{:.3f}", s.p20 * 1e-6, s.p80 * 1e-6), s.count, speedup,
               to_floor, i.tflops, human_bytes(i.memory.peak_bytes), human_bytes(i.memory.workspace_bytes),
               error_cell(o, i));
  }
  for (const auto &[name, reason] : o.skipped) fmt::print("{:<14} skipped: {}\n", name, reason);
  print_tensor_floor(o, tensor_floor);
  print_sustained(o);
  fmt::print("\nwritten: {}/\n", o.run_dir.string());
}

// On a terminal the progress line rewrites itself; in a log (CI), a plain
// line when an implementation starts sampling and then every 5 s.
ProgressCallback make_progress() {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto last_line_s = std::make_shared<std::map<std::string, double>>();
  return [tty, last_line_s](const Progress &p) {
    if (tty) {
      fmt::print(stderr, "\r\033[K  {} sample {} (round {}), {:.1f} s elapsed, ~{:.0f} s left",
                 p.implementation, p.sample, p.round + 1, p.elapsed_s, std::ceil(p.estimated_left_s));
      std::fflush(stderr);
      return;
    }
    auto [it, first] = last_line_s->try_emplace(p.implementation, p.elapsed_s);
    if (!first && p.elapsed_s - it->second < 5.0) return;
    it->second = p.elapsed_s;
    fmt::print(stderr, "  {}: sample {}, {:.1f} s elapsed, ~{:.0f} s left\n", p.implementation, p.sample,
               p.elapsed_s, std::ceil(p.estimated_left_s));
  };
}

// Every flag in its range (setting_ranges.hpp; docs/guide.md lists them).
ProtocolSettings read_settings(const RunArgs &args) {
  namespace ranges = setting_ranges;
  ProtocolSettings s;
  const auto pass = pass_from_string(args.pass);
  if (!pass) throw InputError(fmt::format("--pass: \"{}\" is not forward, backward or full", args.pass));
  s.pass = *pass;
  s.cold = !args.hot;
  s.warmup_runs = count_flag("--warmup", args.warmup, 0, ranges::kMaxWarmupRuns);
  s.min_samples = count_flag("--min-samples", args.min_samples, 1, ranges::kMaxSamples);
  // A maximum below the minimum is raised to it: `--min-samples 2000` alone
  // asks for 2000 samples.
  s.max_samples = std::max<std::size_t>(count_flag("--max-samples", args.max_samples, 1, ranges::kMaxSamples),
                                        s.min_samples);
  s.min_time_s = number_flag("--min-time", args.min_time, 0.0, ranges::kMaxMinTimeS, true, "seconds");
  s.max_noise = fraction_flag("--max-noise", args.max_noise, ranges::kMaxNoise);
  s.timeout_s = number_flag("--timeout", args.timeout, 0.0, ranges::kMaxTimeoutS, false, "seconds");
  s.interleave = !args.no_interleave;
  s.sustained_time_s =
      number_flag("--sustained", args.sustained, 0.0, ranges::kMaxSustainedS, true, "seconds");
  return s;
}

int run_command(const RunArgs &args) {
  SessionOptions options;
  options.settings = read_settings(args);
  const auto backend = make_backend();
  for (const auto &w : args.workloads) options.workload_files.emplace_back(w);
  options.implementations = args.implementations;
  options.out_dir = args.out;
  if (!args.save_tensors.empty()) options.save_tensors = args.save_tensors;
  options.note = [](const std::string &line) { fmt::print(stderr, "note: {}\n", io::printable(line)); };
  options.progress = make_progress();
  const auto outcomes = run_session(*backend, options);
  if (::isatty(STDERR_FILENO)) fmt::print(stderr, "\r\033[K");
  bool all_passed = true;
  for (const auto &o : outcomes) {
    print_outcome(o);
    for (const auto &i : o.implementations)
      all_passed = all_passed && (i.status == "passed" || i.status == "incomplete_evidence");
  }
  return all_passed ? 0 : 1;
}

} // namespace

void add_run(CLI::App &app, Action &action) {
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
  run->add_flag("--hot", args->hot, "Do not flush the GPU L2 before each sample");
  run->add_option("--warmup", args->warmup,
                  fmt::format("Untimed invocations first (0 to {})", setting_ranges::kMaxWarmupRuns))
      ->type_name("N")
      ->capture_default_str();
  run->add_option("--min-samples", args->min_samples,
                  fmt::format("Samples before stopping is considered (1 to {})", setting_ranges::kMaxSamples))
      ->type_name("N")
      ->capture_default_str();
  run->add_option("--max-samples", args->max_samples,
                  fmt::format("Stop at this many samples (1 to {}; raised to --min-samples)",
                              setting_ranges::kMaxSamples))
      ->type_name("N")
      ->capture_default_str();
  run->add_option("--min-time", args->min_time,
                  fmt::format("Seconds of samples before stopping (0 to {})", setting_ranges::kMaxMinTimeS))
      ->type_name("SECONDS")
      ->capture_default_str();
  run->add_option(
         "--max-noise", args->max_noise,
         fmt::format("Stop when the median's relative standard error is below: a fraction (0 to {}) or a "
                     "percentage (0.5%)",
                     setting_ranges::kMaxNoise))
      ->type_name("NOISE")
      ->capture_default_str();
  run->add_option(
         "--timeout", args->timeout,
         fmt::format("Stop sampling one implementation after this many seconds (above 0, at most {})",
                     setting_ranges::kMaxTimeoutS))
      ->type_name("SECONDS")
      ->capture_default_str();
  run->add_option("--save-tensors", args->save_tensors,
                  "Write inputs and every implementation's outputs as .npy files (with index.json) here");
  run->add_flag("--no-interleave", args->no_interleave, "Time implementations one after another");
  run->add_option(
         "--sustained", args->sustained,
         fmt::format("Seconds each GPU implementation then runs back to back while the board's energy is "
                     "read (0 to {}; 0: skip)",
                     setting_ranges::kMaxSustainedS))
      ->type_name("SECONDS")
      ->capture_default_str();
  run->footer(R"(Exit codes: 0 all checked outputs passed, 1 a correctness failure, 2 bad input (a flag out of
its range, a workload, an --out or --save-tensors folder that cannot be written: refused before
any work).

Examples:
  kibench run                                   # default workload and implementations
  kibench run workloads/small/*.json --impl cpu-reference --out runs
  kibench run workloads/seed-distill-jsd-h4096-t8192-v128256.json --impl fused,cublas-floor --pass forward
  kibench run --hot --min-samples 50 --max-noise 0.2%
  kibench run workloads/small/small-v1000-h64-t32.json --save-tensors tensors/)");
  run->callback([args, &action] { action = [args] { return run_command(*args); }; });
}

} // namespace kibench::cli
