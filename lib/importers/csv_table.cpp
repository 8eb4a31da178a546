#include "lib/importers/csv_table.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "lib/error.hpp"

namespace kibench::importers {
namespace {

// Reads records one character at a time; `line` counts physical lines so a
// record that spans several (a quoted line break) is reported where it starts.
class CsvScanner {
public:
  explicit CsvScanner(std::string_view text) : text_(text) {
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);
  }

  [[nodiscard]] bool done() const { return pos_ >= text_.size(); }

  CsvRecord next() {
    CsvRecord record;
    record.line = line_;
    std::string field;
    bool quoted = false;      // inside a quoted field
    bool after_quote = false; // the current field was quoted and has closed
    bool field_started = false;
    const auto note = [&record](std::string problem) {
      if (!record.problem) record.problem = std::move(problem);
    };
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (quoted) {
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            field.push_back('"');
            ++pos_;
          } else {
            quoted = false;
            after_quote = true;
          }
        } else {
          if (c == '\n') ++line_;
          field.push_back(c);
        }
        continue;
      }
      if (c == ',') {
        record.fields.push_back(std::move(field));
        field.clear();
        after_quote = false;
        field_started = true;
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
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
      field.push_back(c);
      field_started = true;
    }
    if (quoted) note(fmt::format("field {}: the quoted field never closes", record.fields.size() + 1));
    // An empty line holds no field at all: it is not a record.
    if (field_started || !field.empty() || !record.fields.empty()) record.fields.push_back(std::move(field));
    return record;
  }

private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
};

} // namespace

std::vector<CsvRecord> read_csv(std::string_view text) {
  std::vector<CsvRecord> records;
  CsvScanner scanner(text);
  while (!scanner.done()) {
    CsvRecord record = scanner.next();
    if (!record.fields.empty()) records.push_back(std::move(record));
  }
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
