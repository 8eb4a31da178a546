#include "kernels/cuda/tuning_labels.hpp"

#include <string>

#include <fmt/format.h>

namespace kibench::gpu {

json::Object gemm_tuning_labels(const CublasLt &blas, const AlgorithmTuning &tuning) {
  return gemm_tuning_labels(blas.tuning_records(), tuning);
}

json::Object gemm_tuning_labels(const std::vector<TuningRecord> &records, const AlgorithmTuning &tuning) {
  json::Object labels;
  labels.set("gemm_tuning",
             tuning.candidates > 1
                 ? fmt::format("per shape the fastest of cuBLASLt's first {} heuristic picks, median of {} "
                               "timed rounds",
                               tuning.candidates, tuning.repetitions)
                 : std::string("cuBLASLt's first heuristic pick, untimed"));
  if (tuning.candidates > 1 && tuning.at_cap_margin > 0.0)
    labels.set("gemm_tuning_at_cap",
               fmt::format("where the fastest takes {:g} ms or more: those within {:g} % of it timed again at the "
                           "power limit ({} rounds of {:g} s bursts), the fastest there kept",
                           tuning.at_cap_min_ms, tuning.at_cap_margin * 100.0, tuning.at_cap_rounds,
                           tuning.at_cap_burst_s));
  int index = 0;
  for (const TuningRecord &r : records) {
    labels.set(fmt::format("gemm_{}", ++index),
               fmt::format("{}: heuristic rank {} of {} timed, {:.3f} ms (first pick {:.3f} ms)", r.shape,
                           r.chosen, r.timed, r.chosen_ms, r.heuristic_ms));
    if (r.at_cap > 0)
      labels.set(fmt::format("gemm_{}_at_cap", index),
                 fmt::format("{:.3f} ms a call at the power limit, the fastest there of {} within the margin of "
                             "the cold fastest ({:.3f} ms)",
                             r.at_cap_ms, r.at_cap, r.cold_best_ms));
    if (!r.algorithm.empty()) labels.set(fmt::format("gemm_{}_algorithm", index), r.algorithm);
  }
  return labels;
}

} // namespace kibench::gpu
