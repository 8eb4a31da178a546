// The WorkloadCase of a bound row (kernelindex/liger/README.md, rule 6): the
// operation's variable axes, its inputs with shapes evaluated (derived axes
// by floor division), fp32 scalars, and no correctness assertion (the CSV
// records none).
#pragma once

#include <string>

#include "lib/importers/liger/curated_tables.hpp"
#include "lib/importers/liger/kernel_binding.hpp"
#include "lib/json/value.hpp"
#include "lib/workload/operation_signature.hpp"

namespace kibench::importers::liger {

struct WorkloadCaseRecord {
  json::Value manifest;
  std::string case_key; // "hidden4096-tokens8192-vocab128256-bf16"
};

// `signature` is read from `operation`. Throws RowSkipped(did_not_bind) when
// the bound axes are not exactly the operation's variable axes.
WorkloadCaseRecord make_workload_case(const CuratedManifest &operation,
                                      const detail::OperationSignature &signature, const BoundCase &bound);

// The WorkloadCase spec.correctness of every imported row.
json::Value not_asserted_correctness();

} // namespace kibench::importers::liger
