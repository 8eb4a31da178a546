// What `kibench reproduce` runs for a record: the implementation, the
// workload and the pass, each mapped from the record's own fields, or an
// InputError (exit 2) naming the field it could not map.
//
//   implementation  a kibench record's metadata.labels.implementation, by
//                   name; else spec.implementationDigest, looked up in
//                   KernelIndex's curated ImplementationRevisions of
//                   Liger-Kernel's benchmarks: provider torch is PyTorch
//                   eager (torch-eager, torch-eager-jsd,
//                   torch-eager-fused-linear-jsd), provider liger is
//                   Liger-Kernel (liger, liger-jsd, liger-fused-linear-jsd)
//   pass            metadata.labels.pass; else the mode of the curated
//                   BenchmarkProtocol, else of spec.sourceNative.benchmark
//                   ("distill_jsd_loss/full")
//   workload        a WorkloadCase kibench can generate (its tensors say how:
//                   a kibench run's workload.json) as it is; else a shipped
//                   workload (workloads/) whose case matches the record's
//                   (operation, axes, every tensor's dtype and shape, every
//                   scalar the record states); else one derived from a
//                   shipped workload of the operation at the record's axes,
//                   as `kibench run --axis` derives it. A record that holds
//                   only its workload's digest (a KernelIndex record page)
//                   matches a shipped workload whose case, reduced to what
//                   the record's source states (tensor dtypes and shapes,
//                   some of its scalars, no correctness assertion), has that
//                   digest.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lib/implementation/implementation.hpp"
#include "lib/reproduce/original_run.hpp"
#include "lib/run/backend.hpp"
#include "lib/workload/axis_sweep.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::reproduce {

struct ResolvedRun {
  std::string implementation;      // the lane kibench runs
  std::string implementation_from; // how it was mapped, in words
  Pass pass = Pass::full;
  std::string pass_from;
  // What `kibench run` is given: a workload file and, for a derived case,
  // the --axis values that derive it.
  std::filesystem::path workload_file;
  std::vector<AxisValues> axes;
  Workload workload; // the case that runs
  std::string workload_from;
};

// `known`: the implementations this invocation can make (Backend::
// implementations(): the built-ins, plugins and, under `python -m kibench`,
// the Python lanes).
ResolvedRun resolve(const OriginalRun &original, const std::vector<ImplementationEntry> &known);

// The Python lanes python/kibench/lanes.py ships: they exist only when
// kibench runs under `python -m kibench`.
bool is_python_lane(std::string_view name);

} // namespace kibench::reproduce
