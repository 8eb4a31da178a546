// RFC 4180 CSV, read one record at a time: fields separated by commas,
// records by CRLF or LF, a field in double quotes may hold commas, line
// breaks and doubled quotes ("" is one "). Liger-Kernel's benchmark CSV
// needs all of it: its config column is JSON inside quotes.
//
// A record that breaks the quoting rules is kept, marked with what is wrong,
// so an importer can report it by line and go on with the next one. So is a
// record longer than kMaxRecordBytes, whose fields are cut there: memory
// holds one bounded record, whatever the file.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/io/input_file.hpp"

namespace kibench::importers {

// A Liger row is about 500 bytes; a record of more is not one.
inline constexpr std::size_t kMaxRecordBytes = 1 << 20;

struct CsvRecord {
  std::size_t line = 0; // 1-based line of the file where the record starts
  std::vector<std::string> fields;
  // Set when the record breaks RFC 4180 (unterminated quote, text after a
  // closing quote, a quote inside an unquoted field); the fields are then
  // only a best effort.
  std::optional<std::string> problem;
};

// The records of a text or a file, one at a time, the header included. A
// UTF-8 byte order mark is ignored; empty lines are not records.
class CsvReader {
public:
  // Reads `text`, which must outlive the reader.
  explicit CsvReader(std::string_view text);
  // Reads `file` in chunks, never holding more than one record.
  explicit CsvReader(io::InputFile &file);

  // The next record; nullopt at the end.
  std::optional<CsvRecord> next();

private:
  // The next byte, or -1 at the end.
  int get();
  int peek();
  bool refill();

  io::InputFile *file_ = nullptr;
  std::string chunk_;
  std::string_view window_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  bool started_ = false;
};

// Every record of `text` (CsvReader over it).
std::vector<CsvRecord> read_csv(std::string_view text);

// The header record: which field of a record holds a named column.
class CsvHeader {
public:
  // Throws InputError("<source>: ...") when a required column is missing or
  // a column name is repeated.
  CsvHeader(const CsvRecord &header, std::span<const std::string_view> required_columns,
            std::string_view source);

  [[nodiscard]] std::size_t column_count() const { return names_.size(); }
  // The field of `record` under `column`, which must be one of the required
  // columns and the record as wide as the header.
  [[nodiscard]] const std::string &field(const CsvRecord &record, std::string_view column) const;

private:
  std::vector<std::string> names_;
};

} // namespace kibench::importers
