// Columns aligned by display width (UTF-8 aware: "µs", "×", "−" are one
// column each), for the terminal table.
#pragma once

#include <string>
#include <vector>

namespace kibench::compare {

class TextTable {
public:
  enum class Align { left, right };

  explicit TextTable(std::vector<std::string> headers, std::vector<Align> alignment);
  void add_row(std::vector<std::string> cells);
  // Each line starts with `indent`; columns are separated by two spaces;
  // trailing spaces are trimmed.
  [[nodiscard]] std::string render(const std::string &indent) const;

  // Code points of a UTF-8 string (bytes that do not continue a sequence).
  static std::size_t display_width(const std::string &text);

private:
  std::vector<std::string> headers_;
  std::vector<Align> alignment_;
  std::vector<std::vector<std::string>> rows_;
};

} // namespace kibench::compare
