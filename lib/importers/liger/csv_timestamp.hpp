// The timestamp column of Liger-Kernel's benchmark CSV: "YYYY-MM-DD
// HH:MM:SS", written by the benchmark host without a zone; KernelIndex reads
// it as UTC.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kibench::importers::liger {

class CsvTimestamp {
public:
  // nullopt unless `text` is exactly "YYYY-MM-DD HH:MM:SS" naming a real
  // calendar day and time of day (no leap seconds).
  static std::optional<CsvTimestamp> parse(std::string_view text);

  // As written in the CSV.
  [[nodiscard]] const std::string &text() const { return text_; }
  // RFC 3339 UTC with milliseconds: "2024-12-03T08:00:25.000Z".
  [[nodiscard]] std::string observed_at() const;

private:
  explicit CsvTimestamp(std::string_view text) : text_(text) {}
  std::string text_;
};

} // namespace kibench::importers::liger
