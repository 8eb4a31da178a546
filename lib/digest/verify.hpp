// Verification of a manifest set: every digest a manifest references is
// recomputed from the manifest (or file) it names.
//
// Checked references:
//   BenchmarkRun            spec.implementationDigest -> ImplementationRevision
//                           spec.workloadDigest       -> WorkloadCase
//                           spec.protocolDigest       -> BenchmarkProtocol
//                           spec.environmentDigest    -> ExecutionEnvironment
//                           spec.timing.rawSamples, spec.evidence.rawSamples,
//                           spec.evidence.logs        -> sha256 of the file at
//                                                        uri (relative to the
//                                                        manifest's directory)
//   WorkloadCase            spec.operationSpecDigest  -> OperationSpec
//   ImplementationRevision  spec.operation.specDigest -> OperationSpec
//
// A reference whose kind is absent from the set is a note for manifests
// named alone (a record page carries no workload), a failure for a run
// directory (which must be complete). A present manifest of that kind with
// another digest is always a failure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/digest/manifest_set.hpp"

namespace kibench {

struct ManifestVerification {
  std::string label;
  std::string kind;
  // "<label>: <field>: <problem>", e.g. "run.fused.json: spec.protocolDigest:
  // sha256:ab... does not match protocol.json (sha256:cd...)".
  std::vector<std::string> failures;
  // References that could not be checked, in the same form.
  std::vector<std::string> notes;
  // For a run whose operation, workload, protocol and environment are all
  // present and match: its cohort's comparison key.
  std::optional<std::string> comparison_key;

  [[nodiscard]] bool ok() const { return failures.empty(); }
};

struct VerifyReport {
  // Every run, workload and implementation not read only as a neighbour, and
  // the neighbours a checked run references.
  std::vector<ManifestVerification> manifests;

  [[nodiscard]] bool ok() const;
  [[nodiscard]] std::vector<std::string> failures() const;
};

VerifyReport verify(const ManifestSet &set);

} // namespace kibench
