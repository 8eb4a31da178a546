#include "lib/run/progress_line.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/io/terminal_text.hpp"

namespace kibench {

namespace {

// Characters as a terminal shows them: UTF-8 continuation bytes take no column.
std::size_t columns_of(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The first `columns` characters of `text` (whole UTF-8 sequences).
std::string first_columns(std::string_view text, std::size_t columns) {
  std::size_t seen = 0, at = 0;
  for (; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) continue;
    if (seen++ == columns) break;
  }
  return std::string(text.substr(0, at));
}

// `name` in at most `columns` characters: its start and end around "…".
std::string shortened(const std::string &name, std::size_t columns) {
  if (columns_of(name) <= columns || columns < 3) return name;
  const std::size_t keep = columns - 1, head = (keep + 1) / 2, tail = keep - head;
  const std::string start = first_columns(name, head);
  std::string end;
  std::size_t taken = 0;
  for (std::size_t at = name.size(); at > 0 && taken < tail;) {
    --at;
    if ((static_cast<unsigned char>(name[at]) & 0xC0) != 0x80) {
      ++taken;
      end = name.substr(at);
    }
  }
  return start + "…" + end;
}

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.2f} %", fraction * 100) : "–";
}

std::string stop_words(const std::string &reason) {
  if (reason == "noise_target") return "noise target met";
  if (reason == "max_samples") return "stopped at the sample cap";
  if (reason == "timeout") return "stopped at the time limit";
  if (reason == "check_failed") return "failed its check: timed to the minimum only";
  return reason;
}

// What the phase says after the implementation's name.
std::string phase_text(const Progress &p) {
  const std::string left = p.estimated_left_s ? " · " + time_left_text(*p.estimated_left_s) : "";
  switch (p.phase) {
  case Phase::oracle:
    return "computing the oracle's answer";
  case Phase::check:
    return "checking against the oracle";
  case Phase::warmup:
    return "warm-up";
  case Phase::sampling: {
    if (p.rule_met_at > 0 && p.sample > p.rule_met_at)
      return fmt::format("{} samples · its rule met at {}; sampling on in the rounds the others need{}", p.sample,
                         p.rule_met_at, left);
    const bool at_cap = p.samples_expected >= p.max_samples && p.sample < p.max_samples;
    const std::string expected =
        at_cap ? fmt::format("{} (cap)", p.max_samples) : fmt::format("~{}", p.samples_expected);
    return fmt::format("{}/{} samples · noise {} → {}{}", p.sample,
                       p.sample >= p.samples_expected ? std::to_string(p.sample) : expected, percent(p.noise),
                       percent(p.noise_target), left);
  }
  case Phase::lane_done:
    return fmt::format("done: {} samples, noise {} ({}){}", p.sample, percent(p.noise),
                       stop_words(p.stop_reason), left);
  case Phase::sustained:
    return fmt::format("back to back (sustained phase){}", left);
  }
  return "";
}

} // namespace

std::string time_left_text(double seconds) {
  if (!(seconds >= 1.0)) return "<1 s left";
  if (seconds < 90.0) return fmt::format("~{:.0f} s left", std::ceil(seconds));
  const double minutes = std::round(seconds / 60.0);
  if (minutes < 90.0) return fmt::format("~{:.0f} min left", minutes);
  const double hours = std::floor(minutes / 60.0);
  return fmt::format("~{:.0f} h {:.0f} min left", hours, minutes - hours * 60.0);
}

std::string progress_line(const Progress &p, std::optional<std::size_t> columns) {
  const std::string workload = io::printable(p.workload);
  const auto compose = [&](const std::string &name) {
    return fmt::format("[{}/{}] {} · {} · {}", p.workload_index + 1, p.workload_count, name,
                       io::printable(p.implementation), phase_text(p));
  };
  std::string line = compose(workload);
  if (!columns || columns_of(line) <= *columns) return line;
  // The workload name gives way first (to no fewer than 16 characters), then the end.
  const std::size_t excess = columns_of(line) - *columns;
  const std::size_t name_columns = columns_of(workload);
  line = compose(
      shortened(workload, std::max<std::size_t>(16, name_columns > excess ? name_columns - excess : 0)));
  if (columns_of(line) > *columns) line = first_columns(line, *columns > 0 ? *columns - 1 : 0) + "…";
  return line;
}

bool ProgressLog::wants(const Progress &p, double now_s) {
  bool wanted = p.phase != Phase::sampling;
  if (p.phase == Phase::sampling) {
    wanted = sampled_workload_ != p.workload_index || !last_line_s_ || now_s - *last_line_s_ >= interval_s_;
    sampled_workload_ = p.workload_index;
  }
  if (wanted) last_line_s_ = now_s;
  return wanted;
}

} // namespace kibench
