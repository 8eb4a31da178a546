// The shipped row kernel with the schedule knobs from the environment
// (row_kernels.hpp, kRowKernelScheduled).
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "dev/fused/row_kernels.hpp"

namespace kibench::gpu::fused {

namespace {

std::int64_t environment_integer(const char *name, std::int64_t fallback) {
  const char *text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  std::size_t used = 0;
  const std::int64_t value = std::stoll(text, &used);
  if (used != std::string(text).size() || value < -1)
    throw std::invalid_argument(std::string(name) + "=" + text + ": a whole number >= -1");
  return value;
}

} // namespace

void launch_row_loss_scheduled(const RowLossArgs &args, cudaStream_t stream) {
  static const RowLossV6Limits limits{
      .stagger_ns = environment_integer("KIBENCH_ROW_STAGGER_US", 0) * 1000,
      .staged_wait = static_cast<int>(environment_integer("KIBENCH_ROW_STAGED_WAIT", -1))};
  const ScopedRowLossV6Limits scoped(limits);
  launch_row_loss(args, stream);
}

} // namespace kibench::gpu::fused
