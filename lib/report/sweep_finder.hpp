// Finds sweeps over any axis among the runs (T, V, H, ...): runs of one
// operation, protocol and environment whose workloads are equal once that
// axis (and the axes the operation derives from it), the tensor shapes
// (which follow from the axes), the generator seeds, the weights' init
// bounds ±1/sqrt(fan_in) and a whole-number generator parameter that
// equals the axis in every run (the target's range [0, vocab) over V) are
// set aside. Each such group measured at kMinSweepValues or more values of
// the axis is a sweep: one series per implementation, one point per value.
// Two values are a pair of cases, not a trend (a workload and its T = 1 or
// odd-V edge case), and the tables show them. One set of
// runs may hold sweeps over several axes (a T x V product: a T sweep at
// each V, a V sweep at each T).
//
// Series are ordered reference, cpu-reference, the others as given, then
// cublas-floor. Two runs of one implementation at the same value (a
// repeated run) give one point: the first given; the sweep's notes say how
// many were left out.
#pragma once

#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/report/manifest_index.hpp"
#include "lib/report/report_model.hpp"
#include "lib/report/slug.hpp"

namespace kibench::report {

inline constexpr std::size_t kMinSweepValues = 3;

// `figures` holds read_run_figures of every run, by index.
std::vector<Sweep> find_sweeps(const std::vector<compare::ComparedRun> &runs,
                               const std::vector<RunFigures> &figures, const ManifestIndex &index,
                               SlugRegistry &slugs);

} // namespace kibench::report
