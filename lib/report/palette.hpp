// Colours of the report. Each implementation keeps one colour on every
// chart of a page, so "fused" is the same blue in a cohort's bars and in a
// sweep's lines. The series colours are Okabe and Ito's palette, chosen to
// stay distinguishable under the common colour-vision deficiencies.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kibench::report {

// The n-th series colour (cycles after the palette's seven).
std::string_view series_color(std::size_t index);

inline constexpr std::string_view kFailedColor = "#c0392b";    // outline of a run that failed its check
inline constexpr std::string_view kReferenceColor = "#555555"; // reference lines (1×, the floor)
inline constexpr std::string_view kAxisColor = "#333333";
inline constexpr std::string_view kGridColor = "#e3e3e3";

// Implementation names in the order they were first seen; the index of a
// name is its colour.
class ColorAssignment {
public:
  explicit ColorAssignment(std::vector<std::string> names_in_order) : names_(std::move(names_in_order)) {}
  [[nodiscard]] std::string_view color_of(std::string_view name) const;

private:
  std::vector<std::string> names_;
};

} // namespace kibench::report
