// Why a row of Liger-Kernel's benchmark CSV did not become a record. Some
// reasons are KernelIndex's import policy (the row is fine, it is just not
// imported); the others are problems with the row, which `--strict` turns
// into a failed import.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kibench::importers::liger {

enum class SkipReason {
  memory_row,       // metric_name "memory": KernelIndex imports speed rows only
  other_kernel,     // not jsd, fused_linear_jsd or distill_jsd_loss
  duplicate,        // a run external id an earlier row already imported
  non_finite,       // median not finite or not positive
  unknown_gpu,      // gpu_name has no curated ExecutionEnvironment
  unknown_provider, // kernel_provider has no curated implementation/project
  did_not_bind,     // the row's values do not bind the kernel's OperationSpec
  name_collision,   // an earlier row already took this run's metadata.name
  malformed,        // bad CSV, bad number, bad config JSON, bad timestamp
};

inline constexpr std::array kAllSkipReasons{
    SkipReason::memory_row,   SkipReason::other_kernel,   SkipReason::duplicate,
    SkipReason::non_finite,   SkipReason::unknown_gpu,    SkipReason::unknown_provider,
    SkipReason::did_not_bind, SkipReason::name_collision, SkipReason::malformed,
};

// Policy skips are expected in every upstream file; the rest mean the row
// (or the curated tables) need attention.
constexpr bool is_row_problem(SkipReason reason) {
  switch (reason) {
  case SkipReason::memory_row:
  case SkipReason::other_kernel:
  case SkipReason::duplicate:
  case SkipReason::non_finite:
    return false;
  default:
    return true;
  }
}

// Stable identifier, used as the key in `--json` output.
constexpr std::string_view key(SkipReason reason) {
  switch (reason) {
  case SkipReason::memory_row:
    return "memory_row";
  case SkipReason::other_kernel:
    return "other_kernel";
  case SkipReason::duplicate:
    return "duplicate";
  case SkipReason::non_finite:
    return "non_finite";
  case SkipReason::unknown_gpu:
    return "unknown_gpu";
  case SkipReason::unknown_provider:
    return "unknown_provider";
  case SkipReason::did_not_bind:
    return "did_not_bind";
  case SkipReason::name_collision:
    return "name_collision";
  case SkipReason::malformed:
    return "malformed";
  }
  throw std::logic_error("unknown skip reason");
}

// Words for the printed summary.
constexpr std::string_view describe(SkipReason reason) {
  switch (reason) {
  case SkipReason::memory_row:
    return "memory rows";
  case SkipReason::other_kernel:
    return "other kernels";
  case SkipReason::duplicate:
    return "duplicates";
  case SkipReason::non_finite:
    return "non-finite or non-positive median";
  case SkipReason::unknown_gpu:
    return "unknown GPU";
  case SkipReason::unknown_provider:
    return "unknown provider";
  case SkipReason::did_not_bind:
    return "did not bind";
  case SkipReason::name_collision:
    return "run name taken";
  case SkipReason::malformed:
    return "malformed";
  }
  throw std::logic_error("unknown skip reason");
}

// A row that is skipped, and why; thrown while a row is being converted.
// message() is the whole message: it quotes CSV fields, which may hold a
// NUL that what() would stop at.
class RowSkipped : public std::runtime_error {
public:
  RowSkipped(SkipReason reason, const std::string &message)
      : std::runtime_error(message), reason_(reason), message_(message) {}
  [[nodiscard]] SkipReason reason() const { return reason_; }
  [[nodiscard]] const std::string &message() const { return message_; }

private:
  SkipReason reason_;
  std::string message_;
};

} // namespace kibench::importers::liger
