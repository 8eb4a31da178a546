#include "lib/run/run_printer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/run/outcome_summary.hpp"

namespace kibench {
namespace {

std::string human_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b * 1e-9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b * 1e-6);
  return fmt::format("{:.1f} kB", b * 1e-3);
}

std::string correctness_cell(const ImplementationFacts &f) {
  if (!f.verdict) return "not checked (no loss)";
  double worst = 0;
  const ErrorStats *nonfinite = nullptr;
  for (const auto &e : f.verdict->outputs) {
    worst = std::max(worst, e.rel_l2_error);
    if (e.nonfinite > 0 && (nonfinite == nullptr || e.nonfinite > nonfinite->nonfinite)) nonfinite = &e;
  }
  // NaN or Inf elements fail whatever the finite ones' error: say which
  // output and how many, not a relative error of the finite ones alone.
  if (!f.verdict->passed && nonfinite != nullptr)
    return fmt::format("FAILED ({} NaN/Inf in {})", nonfinite->nonfinite, nonfinite->output);
  return fmt::format("{} (max rel {:.1e})", f.verdict->passed ? "passed" : "FAILED", worst);
}

// Why sampling stopped, in a word: its noise target, or a cap.
std::string stop_cell(const std::string &reason) {
  if (reason == "noise_target") return "noise";
  if (reason == "max_samples") return "n cap";
  if (reason == "timeout") return "time cap";
  if (reason == "check_failed") return "failed";
  return reason.empty() ? "–" : reason;
}

// A percentage of a relative error, with enough digits to compare with its
// target.
std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.2f} %", fraction * 100) : "unknown (one sample)";
}

// The implementations whose sampling hit a cap before the noise target:
// one warning line each, with what to change.
void render_short_stops(std::string &out, const WorkloadOutcome &o) {
  for (const auto &i : o.implementations) {
    if (!stopped_short_of_noise_target(i, o.noise_target)) continue;
    const Measurement &m = i.facts.measurement;
    const bool time = m.stop_reason == "timeout";
    // At the time limit, what a sample took beside its timed run.
    std::string each;
    if (time && !m.samples.empty() && m.sampling_wall_s > 0.0)
      each = fmt::format(", each taking {:.2f} s of wall time",
                         m.sampling_wall_s / static_cast<double>(m.samples.size()));
    out += fmt::format("warning: {} stopped at the {} ({} samples{}) with the median's noise at {}, above the "
                       "{} target: raise {}, or read its interval as wider\n",
                       i.facts.name, time ? "time limit" : "sample cap", i.result.latency_ns.count, each,
                       percent(i.result.median_noise), percent(o.noise_target),
                       time ? "--timeout" : "--max-samples");
  }
}

// Every median against the tensor cores' own floor, where it ran.
void render_tensor_floor(std::string &out, const WorkloadOutcome &o,
                         const ImplementationOutcome *tensor_floor) {
  if (tensor_floor == nullptr || !(median_of(*tensor_floor) > 0)) return;
  std::string ratios;
  for (const auto &i : o.implementations)
    if (&i != tensor_floor && !i.facts.failed())
      ratios += fmt::format("{}{} {:.2f}×", ratios.empty() ? "" : ", ", i.facts.name,
                            median_of(i) / median_of(*tensor_floor));
  if (!ratios.empty())
    out += fmt::format("\n÷ wgmma-floor (the tensor cores alone, {:.3f} ms): {}\n",
                       median_of(*tensor_floor) * 1e-6, ratios);
}

// The range of a sustained measurement's round latencies, "29.25–29.63",
// or "" for one round.
std::string round_range_ms(const SustainedMeasurement &m) {
  if (m.rounds.size() <= 1) return {};
  double low = m.rounds.front().latency_ns, high = low;
  for (const SustainedRound &r : m.rounds) {
    low = std::min(low, r.latency_ns);
    high = std::max(high, r.latency_ns);
  }
  return fmt::format("{:.3f}–{:.3f}", low * 1e-6, high * 1e-6);
}

// The sustained phase: back to back, warm, with the board's power. With
// several rounds the figures are medians over them, and a last column
// gives the range of the rounds' latencies.
void render_sustained(std::string &out, const WorkloadOutcome &o) {
  bool header = false, rounds = false;
  for (const auto &i : o.implementations)
    if (const auto &m = i.facts.measurement.sustained; m && i.result.sustained && m->rounds.size() > 1)
      rounds = true;
  for (const auto &i : o.implementations) {
    const auto &m = i.facts.measurement.sustained;
    if (!m || !i.result.sustained) continue;
    if (!header) {
      out += rounds ? "\nback to back, warm (board energy counter; medians over the rounds):\n"
                    : "\nback to back, warm (board energy counter):\n";
      out += fmt::format("{:<14} {:>11} {:>7} {:>8} {:>7} {:>9} {:>8}{}\n", "implementation", "ms each", "n",
                         "TFLOP/s", "watts", "J each", "SM MHz", rounds ? "  rounds, ms each" : "");
      header = true;
    }
    const SustainedFigures &figures = *i.result.sustained;
    const auto &p = m->power;
    const std::string range = round_range_ms(*m);
    out += fmt::format("{:<14} {:>11.3f} {:>7} {:>8.3g} {:>7} {:>9} {:>8}{}\n", i.facts.name,
                       m->latency_ns * 1e-6, m->invocations, m->latency_ns > 0 ? figures.tflops : 0.0,
                       p ? fmt::format("{:.0f}", p->power_w) : "–",
                       figures.energy_j ? fmt::format("{:.3g}", *figures.energy_j) : "no step",
                       p && p->sm_clock_mhz ? fmt::format("{:.0f}", *p->sm_clock_mhz) : "–",
                       range.empty() ? "" : "  " + range);
  }
}

} // namespace

std::string render_check_table(const WorkloadOutcome &o) {
  std::string out = fmt::format("\n{}: checked against {} (loss {:.9g}), one invocation each, nothing timed\n",
                                o.workload.name, o.oracle, o.oracle_loss);
  std::size_t width = 14;
  for (const auto &i : o.implementations) width = std::max(width, i.facts.name.size());
  out += fmt::format("{:<{}} {:>16}  {}\n", "implementation", width, "loss", "correctness");
  for (const auto &i : o.implementations) {
    if (i.facts.failed()) {
      out += fmt::format("{:<{}} FAILED ({}): {}\n", i.facts.name, width, to_string(i.facts.status),
                         i.facts.failure);
      continue;
    }
    out += fmt::format("{:<{}} {:>16.9g}  {}\n", i.facts.name, width, i.facts.loss,
                       i.facts.verdict ? correctness_cell(i.facts) : std::string("computes no loss: not checked"));
    if (i.facts.verdict && !i.facts.verdict->passed) out += fmt::format("  {}\n", i.facts.verdict->summary);
  }
  for (const auto &[name, reason] : o.skipped) out += fmt::format("{:<{}} skipped: {}\n", name, width, reason);
  return out;
}

std::string render_run_table(const WorkloadOutcome &o) {
  const auto [reference, floor, tensor_floor] = reference_points(o);
  const Workload &w = o.workload;
  std::string out;
  out += fmt::format("\n{}  ({})\n", w.name, w.operation_kind->describe_shape(w));
  out += fmt::format("checked against {} (loss {:.9g})\n\n", o.oracle, o.oracle_loss);
  // Names longer than the header (plugins') widen the first column.
  std::size_t width = 14;
  for (const auto &i : o.implementations) width = std::max(width, i.facts.name.size());
  // Bandwidth where no GEMM bounds the pass (jsd), else GEMM throughput.
  const bool bandwidth = w.minimum_bytes(true, true) > 0.0;
  // GB/s with its share of the board's peak DRAM bandwidth where known.
  const bool of_peak = bandwidth && o.peak_bandwidth_gbps && *o.peak_bandwidth_gbps > 0.0;
  const int rate_width = of_peak ? 14 : 8;
  out += fmt::format("{:<{}} {:>11} {:>19} {:>7} {:>8} {:>9} {:>8} {:>{}} {:>10} {:>10}  {}\n",
                     "implementation", width, "median ms", "p20–p80 ms", "n", "stop", "vs ref", "÷ floor",
                     !bandwidth ? "TFLOP/s" : of_peak ? "GB/s (% peak)" : "GB/s", rate_width, "peak",
                     "workspace", "correctness");
  for (const auto &i : o.implementations) {
    if (i.facts.failed()) {
      out += fmt::format("{:<{}} FAILED ({}): {}\n", i.facts.name, width, to_string(i.facts.status),
                         i.facts.failure);
      continue;
    }
    const auto &s = i.result.latency_ns;
    // A lane that failed its check is timed but not compared: its time is
    // not the time of a correct result.
    const bool correct = !i.facts.verdict || i.facts.verdict->passed;
    const std::string speedup = correct && reference && reference != &i
                                    ? fmt::format("{:.2f}×", median_of(*reference) / s.median)
                                    : "–";
    const std::string to_floor =
        correct && floor && floor != &i ? fmt::format("{:.2f}", s.median / median_of(*floor)) : "–";
    const std::string rate =
        of_peak ? fmt::format("{:.4g} ({:.0f} %)", i.result.gbps, 100.0 * i.result.gbps / *o.peak_bandwidth_gbps)
                : fmt::format("{:.3g}", bandwidth ? i.result.gbps : i.result.tflops);
    out += fmt::format("{:<{}} {:>11.3f} {:>19} {:>7} {:>8} {:>9} {:>8} {:>{}} {:>10} {:>10}  {}\n",
                       i.facts.name, width, s.median * 1e-6,
                       fmt::format("{:.3f}–{:.3f}", s.p20 * 1e-6, s.p80 * 1e-6), s.count,
                       stop_cell(i.facts.measurement.stop_reason), speedup, to_floor, rate, rate_width,
                       i.facts.memory.measured ? human_bytes(i.facts.memory.peak_bytes) : std::string("unknown"),
                       i.facts.memory.measured ? human_bytes(i.facts.memory.workspace_bytes) : std::string("unknown"),
                       correctness_cell(i.facts));
  }
  for (const auto &[name, reason] : o.skipped)
    out += fmt::format("{:<{}} skipped: {}\n", name, width, reason);
  render_short_stops(out, o);
  render_tensor_floor(out, o, tensor_floor);
  render_sustained(out, o);
  out += fmt::format("\nwritten: {}/\n", o.run_dir.string());
  return out;
}

std::string render_failure_summary(const std::vector<WorkloadOutcome> &outcomes) {
  std::string lines;
  std::size_t count = 0;
  for (const WorkloadOutcome &o : outcomes)
    for (const ImplementationOutcome &i : o.implementations) {
      const ImplementationFacts &f = i.facts;
      if (!is_failure(f.status)) continue;
      const std::string reason = f.failed() ? f.failure : f.verdict ? f.verdict->summary : std::string();
      lines += fmt::format("  {} · {} · {}: {}\n", o.workload.name, f.name, to_string(f.status), reason);
      ++count;
    }
  if (count == 0) return "";
  return fmt::format("\n{} implementation run{} failed (exit 1):\n{}", count, count == 1 ? "" : "s", lines);
}

} // namespace kibench
