// Events recorded between the stages of a pass on one stream, for studies
// of where a pass's time goes (dev/perf/fused_stages_perf.cpp). start()
// opens a pass; each mark(stage) closes the stage begun at the previous
// mark. A stage marked more than once a pass (one per chunk) is summed.
// The events sit on the stream between kernels, so they cost the pass
// nothing but their own records. `fused` marks its stages through the
// dev-only seam (kernels/lm_head/fused/study_hooks.hpp); nothing that ships holds
// a clock.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/cuda/stream.hpp"
#include "kernels/lm_head/fused/study_hooks.hpp"

namespace kibench::gpu {

class StageClock final : public StageMarks {
public:
  void start(cudaStream_t stream) override;
  void mark(const char *stage, cudaStream_t stream) override;
  // Milliseconds per stage, summed over the pass's marks, in the order the
  // stages were first marked. Call once the stream has finished the pass.
  [[nodiscard]] std::vector<std::pair<std::string, double>> stages() const;

private:
  Event &next();

  std::vector<Event> events_;      // events_[i] closes names_[i - 1]; reused pass after pass
  std::vector<std::string> names_; // this pass's marks
  std::size_t used_ = 0;           // events recorded this pass
};

} // namespace kibench::gpu
