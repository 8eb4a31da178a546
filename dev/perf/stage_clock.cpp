#include "dev/perf/stage_clock.hpp"

#include <algorithm>
#include <stdexcept>

namespace kibench::gpu {

Event &StageClock::next() {
  if (used_ == events_.size()) events_.emplace_back();
  return events_[used_++];
}

void StageClock::start(cudaStream_t stream) {
  used_ = 0;
  names_.clear();
  next().record(stream);
}

void StageClock::mark(const char *stage, cudaStream_t stream) {
  if (used_ == 0) throw std::logic_error("StageClock::mark before start");
  next().record(stream);
  names_.emplace_back(stage);
}

std::vector<std::pair<std::string, double>> StageClock::stages() const {
  std::vector<std::pair<std::string, double>> sums;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const double ms = Event::elapsed_ms(events_[i], events_[i + 1]);
    const auto found =
        std::find_if(sums.begin(), sums.end(), [&](const auto &s) { return s.first == names_[i]; });
    if (found == sums.end())
      sums.emplace_back(names_[i], ms);
    else
      found->second += ms;
  }
  return sums;
}

} // namespace kibench::gpu
