#include "lib/importers/csv_table.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "lib/error.hpp"

namespace kibench::importers {

CsvReader::CsvReader(std::string_view text) : window_(text) {}

CsvReader::CsvReader(io::InputFile &file) : file_(&file) {}

bool CsvReader::refill() {
  if (pos_ < window_.size()) return true;
  if (file_ == nullptr) return false;
  chunk_.resize(1 << 16);
  const std::size_t n = file_->read(chunk_.data(), chunk_.size());
  chunk_.resize(n);
  window_ = chunk_;
  pos_ = 0;
  return n > 0;
}

int CsvReader::peek() {
  return refill() ? static_cast<unsigned char>(window_[pos_]) : -1;
}

int CsvReader::get() {
  const int c = peek();
  if (c >= 0) ++pos_;
  return c;
}

// Reads one record a character at a time; `line_` counts physical lines so
// a record that spans several (a quoted line break) is reported where it
// starts.
std::optional<CsvRecord> CsvReader::next() {
  if (!started_) {
    started_ = true;
    // The first read of a regular file returns its first 64 KiB whole, so
    // a byte order mark is always within it.
    if (refill() && window_.substr(pos_).starts_with("\xEF\xBB\xBF")) pos_ += 3;
  }
  while (true) {
    if (peek() < 0) return std::nullopt;
    CsvRecord record;
    record.line = line_;
    std::string field;
    std::size_t bytes = 0;    // of the record so far; past kMaxRecordBytes nothing more is kept
    bool quoted = false;      // inside a quoted field
    bool after_quote = false; // the current field was quoted and has closed
    bool field_started = false;
    const auto note = [&record](std::string problem) {
      if (!record.problem) record.problem = std::move(problem);
    };
    bool too_long = false;
    const auto over = [&] {
      if (bytes <= kMaxRecordBytes) return false;
      if (!too_long) note(fmt::format("longer than {} bytes: not a benchmark row", kMaxRecordBytes));
      too_long = true;
      return true;
    };
    const auto keep = [&](char c) {
      if (!over()) field.push_back(c);
    };
    for (int next_char = get(); next_char >= 0; next_char = get()) {
      const char c = static_cast<char>(next_char);
      ++bytes;
      if (quoted) {
        if (c == '"') {
          if (peek() == '"') {
            keep('"');
            get();
          } else {
            quoted = false;
            after_quote = true;
          }
        } else {
          if (c == '\n') ++line_;
          keep(c);
        }
        continue;
      }
      if (c == ',') {
        if (!over()) record.fields.push_back(std::move(field));
        field.clear();
        after_quote = false;
        field_started = true;
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (c == '\r' && peek() == '\n') get();
        ++line_;
        break;
      }
      if (c == '"') {
        if (field.empty() && !after_quote) {
          quoted = true;
          field_started = true;
          continue;
        }
        note(fmt::format("field {}: a quote inside an unquoted field (RFC 4180 doubles quotes only "
                         "inside quoted fields)",
                         record.fields.size() + 1));
      } else if (after_quote) {
        note(fmt::format("field {}: text after the closing quote", record.fields.size() + 1));
      }
      keep(c);
      field_started = true;
    }
    if (quoted) note(fmt::format("field {}: the quoted field never closes", record.fields.size() + 1));
    // An empty line holds no field at all: it is not a record.
    if (field_started || !field.empty() || !record.fields.empty()) record.fields.push_back(std::move(field));
    if (!record.fields.empty()) return record;
  }
}

std::vector<CsvRecord> read_csv(std::string_view text) {
  std::vector<CsvRecord> records;
  CsvReader reader(text);
  while (auto record = reader.next()) records.push_back(std::move(*record));
  return records;
}

CsvHeader::CsvHeader(const CsvRecord &header, std::span<const std::string_view> required_columns,
                     std::string_view source)
    : names_(header.fields) {
  if (header.problem)
    throw InputError(fmt::format("{}:{}: header: {}", source, header.line, *header.problem));
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (std::find(names_.begin() + static_cast<std::ptrdiff_t>(i) + 1, names_.end(), names_[i]) !=
        names_.end())
      throw InputError(
          fmt::format("{}:{}: header: column \"{}\" appears twice", source, header.line, names_[i]));
  }
  for (const std::string_view column : required_columns) {
    if (std::find(names_.begin(), names_.end(), column) == names_.end())
      throw InputError(fmt::format("{}:{}: header: missing column \"{}\"", source, header.line, column));
  }
}

const std::string &CsvHeader::field(const CsvRecord &record, std::string_view column) const {
  const auto it = std::find(names_.begin(), names_.end(), column);
  if (it == names_.end()) throw std::logic_error(fmt::format("CSV column \"{}\" was never required", column));
  return record.fields.at(static_cast<std::size_t>(it - names_.begin()));
}

} // namespace kibench::importers
