// `kibench import liger`: rows of Liger-Kernel's benchmark CSV
// (benchmark/data/all_benchmark_data.csv) as KernelIndex records, for the
// JSD family, following KernelIndex's import rules
// (kernelindex/liger/README.md; docs/import.md says how kibench applies
// them). Reading and converting only: nothing here writes files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
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

// What the summary says of an imported row; the record itself has gone to
// the RecordSink.
struct ImportedRun {
  std::size_t line = 0;
  std::string name; // its directory's name
  std::string external_id;
  std::string run_digest;
  std::string comparison_key;
};

struct ImportReport {
  std::string source;        // the CSV as named
  std::size_t rows_read = 0; // data records (header and empty lines excluded)
  std::vector<ImportedRun> runs;
  std::map<SkipReason, std::size_t> skipped; // how many rows, per reason
  // Every skipped row with what happened to it, except memory rows and
  // other kernels' rows (expected by the hundred in the upstream file).
  std::vector<SkippedRow> skipped_rows;

  [[nodiscard]] std::size_t skipped_total() const;
  // Rows skipped for a problem with the row (is_row_problem).
  [[nodiscard]] std::size_t row_problems() const;
};

// Where records go as they are made (e.g. a RecordBatch, which writes them
// to disk at once), so that memory holds one record, not the file's.
using RecordSink = std::function<void(ImportedRecord &&record)>;
// Told of each skipped row as it is found (the same rows as skipped_rows).
using SkipNotice = std::function<void(const SkippedRow &row)>;

// Reads the CSV one record at a time (io::file_kinds::liger_csv caps it).
// Throws InputError when the file cannot be read, has no header, or lacks a
// required column (speed_row.hpp lists them), and whatever the sink throws.
// Problems of single rows are reported in the result, never thrown.
ImportReport import_liger_csv(const std::filesystem::path &csv, const CuratedTables &tables,
                              const RecordSink &sink, const SkipNotice &notice = {});

// The same for CSV text already read; `source` names it in messages.
ImportReport import_liger_text(std::string_view text, std::string_view source, const CuratedTables &tables,
                               const RecordSink &sink, const SkipNotice &notice = {});

// The directory a record is written to.
RecordDirectory record_directory(ImportedRecord &&record);

// Loads the curated tables for the JSD family from `directory`.
CuratedTables load_jsd_family_tables(const std::filesystem::path &directory);

} // namespace kibench::importers::liger
