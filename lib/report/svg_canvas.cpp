#include "lib/report/svg_canvas.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "lib/compare/text_table.hpp"
#include "lib/report/html_escape.hpp"

namespace kibench::report {

std::string fit_label(const std::string &label, std::size_t longest) {
  const std::size_t width = compare::TextTable::display_width(label);
  if (width <= longest) return label;
  // Byte offset of the n-th code point (a UTF-8 continuation byte is 10xxxxxx).
  const auto offset_of = [&](std::size_t n) {
    std::size_t at = 0;
    for (std::size_t points = 0; at < label.size() && points < n; ++points) {
      ++at;
      while (at < label.size() && (static_cast<unsigned char>(label[at]) & 0xC0) == 0x80) ++at;
    }
    return at;
  };
  const auto separator = [](char c) { return c == '-' || c == '_' || c == '.' || c == ' ' || c == '/'; };
  // Cut from the middle: names that differ, differ at the end as often as
  // at the start ("liger-…-liger" / "liger-…-torch"); and between words:
  // the head ends just after a separator and the tail starts at one, unless
  // a single word is longer than its half.
  const std::size_t kept = longest > 1 ? longest - 1 : 0;
  std::size_t head = (kept + 1) / 2;
  for (std::size_t n = head; n > 0; --n)
    if (separator(label[offset_of(n) - 1])) {
      head = n;
      break;
    }
  const std::size_t tail = kept - head; // what the head left, in code points
  std::size_t tail_begin = offset_of(width - tail);
  for (std::size_t n = width - tail; n < width; ++n)
    if (separator(label[offset_of(n)])) {
      tail_begin = offset_of(n);
      break;
    }
  return label.substr(0, offset_of(head)) + "…" + label.substr(tail_begin);
}

std::string svg_number(double value) {
  if (!std::isfinite(value)) throw std::logic_error("svg_number: a coordinate must be finite");
  std::string text = fmt::format("{:.1f}", value);
  if (text.ends_with(".0")) text.resize(text.size() - 2);
  return text == "-0" ? "0" : text;
}

SvgCanvas::SvgCanvas(int width, int height, std::string_view test_id, std::string_view title,
                     std::string_view description)
    : width_(width), height_(height) {
  out_ = fmt::format("<svg width=\"{0}\" height=\"{1}\" "
                     "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\" data-testid=\"{3}\" "
                     "class=\"chart\">\n<title>{2}</title>\n<desc>{4}</desc>\n",
                     width, height, escape_html(title), escape_html(test_id), escape_html(description));
}

void SvgCanvas::open_tag(std::string_view name, const SvgAttributes &geometry,
                         const SvgAttributes &attributes) {
  out_ += '<';
  out_ += name;
  for (const auto *list : {&geometry, &attributes}) {
    for (const auto &[key, value] : *list) out_ += fmt::format(" {}=\"{}\"", key, escape_html(value));
  }
}

void SvgCanvas::rect(double x, double y, double width, double height, const SvgAttributes &attributes) {
  open_tag("rect",
           {{"x", svg_number(x)},
            {"y", svg_number(y)},
            {"width", svg_number(std::max(width, 0.0))},
            {"height", svg_number(std::max(height, 0.0))}},
           attributes);
  out_ += "/>\n";
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, const SvgAttributes &attributes) {
  open_tag("line",
           {{"x1", svg_number(x1)}, {"y1", svg_number(y1)}, {"x2", svg_number(x2)}, {"y2", svg_number(y2)}},
           attributes);
  out_ += "/>\n";
}

void SvgCanvas::circle(double cx, double cy, double r, const SvgAttributes &attributes) {
  open_tag("circle", {{"cx", svg_number(cx)}, {"cy", svg_number(cy)}, {"r", svg_number(r)}}, attributes);
  out_ += "/>\n";
}

void SvgCanvas::polyline(const std::vector<SvgPoint> &points, const SvgAttributes &attributes) {
  std::string coordinates;
  for (const SvgPoint &p : points) {
    if (!coordinates.empty()) coordinates += ' ';
    coordinates += svg_number(p.x) + "," + svg_number(p.y);
  }
  open_tag("polyline", {{"points", coordinates}, {"fill", "none"}}, attributes);
  out_ += "/>\n";
}

void SvgCanvas::text(double x, double y, std::string_view content, const SvgAttributes &attributes,
                     std::string_view tooltip) {
  open_tag("text", {{"x", svg_number(x)}, {"y", svg_number(y)}}, attributes);
  out_ += '>';
  if (!tooltip.empty()) out_ += fmt::format("<title>{}</title>", escape_html(tooltip));
  out_ += escape_html(content);
  out_ += "</text>\n";
}

void SvgCanvas::open_group(const SvgAttributes &attributes, std::string_view tooltip) {
  open_tag("g", {}, attributes);
  out_ += ">\n";
  if (!tooltip.empty()) out_ += fmt::format("<title>{}</title>\n", escape_html(tooltip));
  ++open_groups_;
}

void SvgCanvas::close_group() {
  if (open_groups_ == 0) throw std::logic_error("SvgCanvas::close_group: no group is open");
  out_ += "</g>\n";
  --open_groups_;
}

std::string SvgCanvas::finish() {
  while (open_groups_ > 0) close_group();
  out_ += "</svg>\n";
  return std::move(out_);
}

} // namespace kibench::report
