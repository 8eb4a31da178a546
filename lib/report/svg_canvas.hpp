// Writes one inline <svg> element: explicit width and height, a viewBox so
// CSS may scale it down, a <title> (what screen readers and tooltips
// show), a <desc>, and a data-testid naming it. Every string given —
// attribute values and text alike — is HTML-escaped here, so callers pass
// names from manifests as they are.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kibench::report {

using SvgAttributes = std::vector<std::pair<std::string, std::string>>;

struct SvgPoint {
  double x = 0.0, y = 0.0;
};

class SvgCanvas {
public:
  SvgCanvas(int width, int height, std::string_view test_id, std::string_view title,
            std::string_view description);

  void rect(double x, double y, double width, double height, const SvgAttributes &attributes);
  void line(double x1, double y1, double x2, double y2, const SvgAttributes &attributes);
  void circle(double cx, double cy, double r, const SvgAttributes &attributes);
  void polyline(const std::vector<SvgPoint> &points, const SvgAttributes &attributes);
  // `content` is text, not markup. A <title> child gives it a tooltip.
  void text(double x, double y, std::string_view content, const SvgAttributes &attributes,
            std::string_view tooltip = {});
  // A non-empty `tooltip` becomes the group's <title>: hovering any of its
  // shapes shows it.
  void open_group(const SvgAttributes &attributes, std::string_view tooltip = {});
  void close_group();

  // The finished element; the canvas is spent afterwards.
  [[nodiscard]] std::string finish();

  [[nodiscard]] int width() const { return width_; }
  [[nodiscard]] int height() const { return height_; }

private:
  void open_tag(std::string_view name, const SvgAttributes &geometry, const SvgAttributes &attributes);

  int width_, height_;
  std::string out_;
  int open_groups_ = 0;
};

// `label` cut to at most `longest` code points, "…" replacing its middle,
// so a long name does not run into the plot and still shows how it ends.
std::string fit_label(const std::string &label, std::size_t longest);

// A coordinate as an attribute value: one decimal is a tenth of a pixel.
std::string svg_number(double value);

} // namespace kibench::report
