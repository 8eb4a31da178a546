#include "lib/importers/liger/liger_import.hpp"

#include <cmath>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/importers/csv_table.hpp"
#include "lib/importers/liger/kernel_binding.hpp"
#include "lib/importers/liger/speed_row.hpp"
#include "lib/io/input_file.hpp"

namespace kibench::importers::liger {
namespace {

// The schemas bound integers (nanoseconds included) by 2^53 - 1.
constexpr double kLargestNs = 9007199254740991.0;

// Rule 1: a median that is not a positive finite number is no measurement.
// Latencies past what the schemas allow are bad numbers, not skips.
void check_latencies(const QuantilesMs &ms) {
  if (!std::isfinite(ms.p50) || ms.p50 <= 0)
    throw RowSkipped(SkipReason::non_finite,
                     fmt::format("y_value_50 is {}, not a positive finite latency", ms.p50));
  for (const auto &[column, value] :
       {std::pair{"y_value_50", ms.p50}, std::pair{"y_value_20", ms.p20}, std::pair{"y_value_80", ms.p80}}) {
    if (std::isfinite(value) && std::fabs(value) * 1e6 > kLargestNs)
      throw RowSkipped(SkipReason::malformed, fmt::format("{}: {} ms is beyond 2^53 ns", column, value));
  }
}

class RowImporter {
public:
  RowImporter(const CuratedTables &tables, const CsvHeader &header) : tables_(tables), header_(header) {
    for (const std::string_view kernel : kJsdFamily) {
      const CuratedManifest *operation = tables.operation(kernel);
      if (operation == nullptr) throw std::logic_error(fmt::format("no OperationSpec loaded for {}", kernel));
      signatures_.emplace(
          std::string(kernel),
          detail::OperationSignature::read(operation->manifest, fmt::format("operation-{}.json", kernel)));
    }
  }

  // The rules in the order they decide (docs/import.md): CSV shape, kernel,
  // metric, columns, latency, curated counterparts and binding, then
  // duplicates of an imported row.
  ImportedRecord import(const CsvRecord &record) {
    if (record.problem) throw RowSkipped(SkipReason::malformed, *record.problem);
    if (record.fields.size() != header_.column_count())
      throw RowSkipped(SkipReason::malformed, fmt::format("{} fields, the header has {}",
                                                          record.fields.size(), header_.column_count()));
    const std::string &kernel = header_.field(record, "kernel_name");
    if (!in_jsd_family(kernel)) throw RowSkipped(SkipReason::other_kernel, kernel);
    const std::string &metric = header_.field(record, "metric_name");
    if (metric == "memory") throw RowSkipped(SkipReason::memory_row, metric);
    if (metric != "speed")
      throw RowSkipped(SkipReason::malformed,
                       fmt::format("metric_name: \"{}\" is neither speed nor memory", metric));

    const SpeedRow row = read_speed_row(header_, record);
    check_latencies(row.ms);
    ImportedRecord imported = import_speed_row(row, tables_, signatures_.at(row.kernel));

    if (const auto it = lines_by_external_id_.find(imported.external_id); it != lines_by_external_id_.end())
      throw RowSkipped(SkipReason::duplicate, fmt::format("duplicate of line {} (external id {})", it->second,
                                                          imported.external_id));
    // metadata.name is cut at 100 characters, so two distinct runs can share
    // it; the second cannot have the directory named after it.
    if (const auto it = lines_by_name_.find(imported.name); it != lines_by_name_.end())
      throw RowSkipped(SkipReason::name_collision,
                       fmt::format("run name {} is already line {}'s (external ids differ: {})",
                                   imported.name, it->second, imported.external_id));
    lines_by_external_id_.emplace(imported.external_id, record.line);
    lines_by_name_.emplace(imported.name, record.line);
    return imported;
  }

private:
  const CuratedTables &tables_;
  const CsvHeader &header_;
  std::unordered_map<std::string, detail::OperationSignature> signatures_;
  std::unordered_map<std::string, std::size_t> lines_by_external_id_;
  std::unordered_map<std::string, std::size_t> lines_by_name_;
};

} // namespace

std::size_t ImportReport::skipped_total() const {
  std::size_t total = 0;
  for (const auto &[reason, count] : skipped) total += count;
  return total;
}

std::size_t ImportReport::row_problems() const {
  std::size_t total = 0;
  for (const auto &[reason, count] : skipped) total += is_row_problem(reason) ? count : 0;
  return total;
}

RecordDirectory record_directory(ImportedRecord &&record) {
  return RecordDirectory{std::move(record.name), std::move(record.files)};
}

CuratedTables load_jsd_family_tables(const std::filesystem::path &directory) {
  return CuratedTables::load(directory, kJsdFamily);
}

namespace {

ImportReport import_records(CsvReader &reader, std::string_view source, const CuratedTables &tables,
                            const RecordSink &sink, const SkipNotice &notice) {
  const std::optional<CsvRecord> header_record = reader.next();
  if (!header_record) throw InputError(fmt::format("{}: empty: no header row", source));
  const CsvHeader header(*header_record, kRequiredColumns, source);

  ImportReport report;
  report.source = std::string(source);
  RowImporter importer(tables, header);
  while (const std::optional<CsvRecord> record = reader.next()) {
    ++report.rows_read;
    try {
      ImportedRecord imported = importer.import(*record);
      report.runs.push_back(ImportedRun{imported.line, imported.name, imported.external_id,
                                        imported.run_digest, imported.comparison_key});
      sink(std::move(imported));
    } catch (const RowSkipped &skip) {
      ++report.skipped[skip.reason()];
      if (skip.reason() != SkipReason::memory_row && skip.reason() != SkipReason::other_kernel) {
        report.skipped_rows.push_back(SkippedRow{record->line, skip.reason(), skip.message()});
        if (notice) notice(report.skipped_rows.back());
      }
    }
  }
  return report;
}

} // namespace

ImportReport import_liger_text(std::string_view text, std::string_view source, const CuratedTables &tables,
                               const RecordSink &sink, const SkipNotice &notice) {
  CsvReader reader(text);
  return import_records(reader, source, tables, sink, notice);
}

ImportReport import_liger_csv(const std::filesystem::path &csv, const CuratedTables &tables,
                              const RecordSink &sink, const SkipNotice &notice) {
  io::InputFile file(csv, io::file_kinds::liger_csv);
  CsvReader reader(file);
  return import_records(reader, csv.string(), tables, sink, notice);
}

} // namespace kibench::importers::liger
