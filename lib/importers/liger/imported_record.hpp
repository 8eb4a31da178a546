// A speed row turned into a self-contained KernelIndex record: the run and
// every manifest it references (plus the implementation's SoftwareProject),
// so `kibench digest --verify` can check it alone.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "lib/importers/liger/curated_tables.hpp"
#include "lib/importers/liger/speed_row.hpp"
#include "lib/json/value.hpp"
#include "lib/workload/operation_signature.hpp"

namespace kibench::importers::liger {

struct ImportedRecord {
  std::size_t line = 0;    // CSV line of the row
  std::string name;        // the run's metadata.name, and its directory's
  std::string external_id; // sourceNative.externalId: what makes a row a duplicate
  std::string run_digest;
  std::string comparison_key;
  // File name -> manifest: run.json, workload.json, operation.json,
  // protocol.json, environment.json, implementation.json, project.json.
  std::vector<std::pair<std::string, json::Value>> files;
};

// `signature` is the kernel's OperationSpec read. Throws RowSkipped
// (unknown_provider, unknown_gpu, did_not_bind) when the row has no curated
// counterpart or does not bind.
ImportedRecord import_speed_row(const SpeedRow &row, const CuratedTables &tables,
                                const detail::OperationSignature &signature);

} // namespace kibench::importers::liger
