#include "lib/importers/liger/csv_timestamp.hpp"

#include <array>

namespace kibench::importers::liger {
namespace {

// The digits at [offset, offset + width) as a number; nullopt unless all
// are ASCII digits.
std::optional<int> digits_at(std::string_view text, std::size_t offset, std::size_t width) {
  int value = 0;
  for (std::size_t i = offset; i < offset + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool is_leap_year(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  static constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : kDays[static_cast<std::size_t>(month - 1)];
}

} // namespace

std::optional<CsvTimestamp> CsvTimestamp::parse(std::string_view text) {
  // YYYY-MM-DD HH:MM:SS
  // 0123456789012345678
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':')
    return std::nullopt;
  const auto year = digits_at(text, 0, 4);
  const auto month = digits_at(text, 5, 2);
  const auto day = digits_at(text, 8, 2);
  const auto hour = digits_at(text, 11, 2);
  const auto minute = digits_at(text, 14, 2);
  const auto second = digits_at(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month)) return std::nullopt;
  if (*hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  return CsvTimestamp(text);
}

std::string CsvTimestamp::observed_at() const {
  std::string out = text_;
  out[10] = 'T';
  return out + ".000Z";
}

} // namespace kibench::importers::liger
