#include "kernels/lm_head/vocab_parallel/local_reduction.hpp"

#include <string>

namespace kibench::vocab_parallel {

LocalReductionSchedule local_reduction_schedule(int ranks) {
  if (ranks < 1)
    throw std::invalid_argument("local_reduction_schedule: " + std::to_string(ranks) + " ranks (at least 1)");
  LocalReductionSchedule schedule;
  for (int r = 1; r < ranks; ++r) schedule.combine_from.push_back(r);
  for (int r = 1; r < ranks; ++r) schedule.copy_to.push_back(r);
  return schedule;
}

} // namespace kibench::vocab_parallel
