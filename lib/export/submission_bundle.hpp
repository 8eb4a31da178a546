// `kibench export --format kernelindex-submission`: runs as one KernelIndex
// PR-path submission (a file for registry/submissions/ of KernelIndex): a
// single YAML document whose lists hold every manifest the runs need —
//
//   projects:        SoftwareProject manifests
//   operations:      OperationSpec manifests
//   workloads:       WorkloadCase manifests
//   implementations: {projectSlug, manifest: ImplementationRevision}
//   runs:            {run: BenchmarkRun, protocol: BenchmarkProtocol,
//                     environment: ExecutionEnvironment}
//
// (KernelIndex's validator parses the file as one YAML document, so the
// manifests are items of these lists, not documents of their own.) Each
// manifest is written as recorded, so every digest stays what it was; every
// reference resolves inside the bundle, except an OperationSpec not found
// beside its run, which the header names as already published. Each
// implementation's project is the SoftwareProject beside its run (an
// imported record's), else one for its repository, else for its package,
// else kibench's own for kibench's implementations, else one named after
// the implementation. The header lists each implementation's declared
// licence (or that it declares none: KernelIndex then shows it as unknown)
// and the raw-sample files the runs name, which are not part of the bundle.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/export/exported_run.hpp"

namespace kibench::exports {

// KernelIndex refuses a submission document larger than this (bytes).
inline constexpr std::size_t kSubmissionDocumentLimit = 262144;

struct SubmissionBundle {
  std::string text;
  std::vector<std::string> warnings; // e.g. an implementation that declares no licence
};

// InputError when the document would exceed kSubmissionDocumentLimit.
SubmissionBundle render_submission(const std::vector<ExportedRun> &runs);

} // namespace kibench::exports
