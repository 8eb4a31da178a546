// Finds sweeps over the tokens axis T among the runs: runs of one
// operation, protocol and environment whose workloads are equal once the
// tokens axis, the tensor shapes (which follow from the axes) and the
// generator seeds are set aside. Each such group measured at two or more
// values of T is a sweep: one series per implementation, one point per T.
//
// Series are ordered reference, cpu-reference, the others as given, then
// cublas-floor. Two runs of one implementation at the same T (a repeated
// run) give one point: the first given; the sweep's notes say how many
// were left out.
#pragma once

#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/report/manifest_index.hpp"
#include "lib/report/report_model.hpp"
#include "lib/report/slug.hpp"

namespace kibench::report {

// `figures` holds read_run_figures of every run, by index.
std::vector<Sweep> find_sweeps(const std::vector<compare::ComparedRun> &runs,
                               const std::vector<RunFigures> &figures, const ManifestIndex &index,
                               SlugRegistry &slugs);

} // namespace kibench::report
