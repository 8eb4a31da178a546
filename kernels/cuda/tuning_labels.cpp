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
  int index = 0;
  for (const TuningRecord &r : records) {
    labels.set(fmt::format("gemm_{}", ++index),
               fmt::format("{}: heuristic rank {} of {} timed, {:.3f} ms (first pick {:.3f} ms)", r.shape,
                           r.chosen, r.timed, r.chosen_ms, r.heuristic_ms));
    if (!r.algorithm.empty()) labels.set(fmt::format("gemm_{}_algorithm", index), r.algorithm);
  }
  return labels;
}

} // namespace kibench::gpu
