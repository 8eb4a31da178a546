// What a report shows of one run, read from its BenchmarkRun and raw
// samples: the median and its 95 % interval, p20/p80, throughput, memory
// and the errors against the oracle. Cohort facts (speedup, rank, ratio to
// the floor) are added by cohort_section.
#pragma once

#include <optional>
#include <string_view>

#include "lib/compare/compared_run.hpp"
#include "lib/report/manifest_index.hpp"
#include "lib/report/report_model.hpp"

namespace kibench::report {

// The interval of the median comes from the raw samples (distribution-free,
// from order statistics: stats::summarize) when the run has them, else from
// spec.timing.latencyNs.confidence95 as the run reports it, else none.
RunFigures read_run_figures(const compare::ComparedRun &run, const ManifestIndex &index);

// Whether an output's error is past its bound under the workload's
// spec.correctness: the loss under "fp64_oracle_loss_rel_abs_grads_rel_l2"
// by its own rule (needs its absolute error, the max_abs_error_loss
// measurement), every other output by maxRelativeError.
bool above_bound(const json::Value &correctness, std::string_view output, double relative,
                 std::optional<double> absolute);

} // namespace kibench::report
