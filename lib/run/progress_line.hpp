// How `kibench run` shows its progress (progress.hpp) on stderr:
//
//   [2/3] distill-jsd-loss-…-vocab128256-bf16 · fused · 412/~860 samples · noise 0.62 % → 0.50 % · ~14 s left
//
// the workload of how many, the implementation, its samples against what
// its stopping rule is now expected to take, the median's relative
// standard error against --max-noise, and the timing still ahead
// (time_left.hpp). On a terminal one line rewrites itself (cut to the
// terminal's width); in a log a line at each phase (the oracle, each
// check, warm-up, an implementation done, the sustained phase) and while
// sampling one every few seconds (ProgressLog).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "lib/harness/progress.hpp"

namespace kibench {

// The line for `p`; with `columns`, at most that many characters wide (the
// workload name shortened in its middle first).
std::string progress_line(const Progress &p, std::optional<std::size_t> columns = std::nullopt);

// "~14 s left", "~3 min left", "~2 h 5 min left"; "<1 s left" below a
// second, never "~0 s" while anything is left to do.
std::string time_left_text(double seconds);

// Which reports earn a line in a log: every one that is not a sample, the
// first sample of each workload, and then a sample once `interval_s` has
// passed since the last line.
class ProgressLog {
public:
  explicit ProgressLog(double interval_s = 5.0) : interval_s_(interval_s) {}
  // `now_s`: any steady clock, in seconds.
  bool wants(const Progress &p, double now_s);

private:
  double interval_s_;
  std::optional<double> last_line_s_;
  std::optional<std::size_t> sampled_workload_; // the workload whose first sample was shown
};

} // namespace kibench
