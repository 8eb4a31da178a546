// `kibench import liger`: rows of Liger-Kernel's benchmark CSV
// (benchmark/data/all_benchmark_data.csv) as KernelIndex records, for the
// JSD family, following KernelIndex's import rules
// (kernelindex/liger/README.md; docs/import.md says how kibench applies
// them). Reading and converting only: nothing here writes files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/importers/liger/curated_tables.hpp"
#include "lib/importers/liger/imported_record.hpp"
#include "lib/importers/liger/skip_reason.hpp"
#include "lib/importers/record_writer.hpp"

namespace kibench::importers::liger {

struct SkippedRow {
  std::size_t line = 0;
  SkipReason reason = SkipReason::malformed;
  std::string message; // without the "<file>:<line>: " prefix
};

struct ImportReport {
  std::string source;        // the CSV as named
  std::size_t rows_read = 0; // data records (header and empty lines excluded)
  std::vector<ImportedRecord> records;
  std::map<SkipReason, std::size_t> skipped; // how many rows, per reason
  // Every skipped row with what happened to it, except memory rows and
  // other kernels' rows (expected by the hundred in the upstream file).
  std::vector<SkippedRow> skipped_rows;

  [[nodiscard]] std::size_t skipped_total() const;
  // Rows skipped for a problem with the row (is_row_problem).
  [[nodiscard]] std::size_t row_problems() const;
};

// Throws InputError when the file cannot be read, has no header, or lacks a
// required column (speed_row.hpp lists them). Problems of single rows are
// reported in the result, never thrown.
ImportReport import_liger_csv(const std::filesystem::path &csv, const CuratedTables &tables);

// The same for CSV text already read; `source` names it in messages.
ImportReport import_liger_text(std::string_view text, std::string_view source, const CuratedTables &tables);

// The directories to write: one per imported record, named after its run.
std::vector<RecordDirectory> record_directories(const ImportReport &report);

// Loads the curated tables for the JSD family from `directory`.
CuratedTables load_jsd_family_tables(const std::filesystem::path &directory);

} // namespace kibench::importers::liger
