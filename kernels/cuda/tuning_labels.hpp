// The GEMM algorithms a CublasLt chose, as BenchmarkRun labels
// (Implementation::run_labels), so that a record says which cuBLASLt
// algorithm each of its GEMM shapes ran with, not only that tuning was on.
#pragma once

#include <vector>

#include "kernels/cuda/cublaslt.hpp"
#include "lib/json/value.hpp"

namespace kibench::gpu {

// gemm_tuning: how algorithms were chosen; gemm_1 ... gemm_n: one tuned
// shape each, in the order tuning met them, with the heuristic rank of the
// algorithm kept and its median time against the heuristic's first pick's;
// gemm_1_algorithm ...: that algorithm's configuration (tile, stages,
// cluster). Where tuning times close candidates at the power limit
// (AlgorithmTuning::at_cap_margin): gemm_tuning_at_cap says how, and
// gemm_i_at_cap, for each shape where it ran, the kept one's time there.
// Each value within the schema's 200 characters.
[[nodiscard]] json::Object gemm_tuning_labels(const std::vector<TuningRecord> &records,
                                              const AlgorithmTuning &tuning);
[[nodiscard]] json::Object gemm_tuning_labels(const CublasLt &blas, const AlgorithmTuning &tuning);

} // namespace kibench::gpu
