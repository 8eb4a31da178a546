#include "lib/compare/text_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace kibench::compare {

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> alignment)
    : headers_(std::move(headers)), alignment_(std::move(alignment)) {
  if (headers_.size() != alignment_.size())
    throw std::invalid_argument("TextTable: one alignment per column");
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != headers_.size()) throw std::invalid_argument("TextTable: one cell per column");
  rows_.push_back(std::move(cells));
}

std::size_t TextTable::display_width(const std::string &text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string TextTable::render(const std::string &indent) const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = display_width(headers_[c]);
    for (const auto &row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  const auto emit = [&](const std::vector<std::string> &cells) {
    std::string line = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string padding(widths[c] - display_width(cells[c]), ' ');
      if (c > 0) line += "  ";
      line += alignment_[c] == Align::right ? padding + cells[c] : cells[c] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  };
  emit(headers_);
  for (const auto &row : rows_) emit(row);
  return out;
}

} // namespace kibench::compare
