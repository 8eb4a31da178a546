#include "lib/report/page_style.hpp"

#include <string>

namespace kibench::report {

std::string_view chart_css() {
  return R"css(
svg.chart { display: block; max-width: 100%; height: auto; background: #fff;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; }
svg.chart text { font-size: 12px; fill: #1d1f23; }
svg.chart text.tick { fill: #5d636c; font-size: 11px; }
svg.chart text.axis-label { font-size: 12px; fill: #333; }
svg.chart text.value { fill: #33373d; font-size: 11.5px; }
svg.chart text.flagged { fill: #c0392b; }
svg.chart text.reference-label { fill: #555; font-size: 11px; }
)css";
}

std::string page_css() {
  return std::string(R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f7f9; color: #1d1f23;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 0 0 2px; word-break: break-all; }
h3 { font-size: 15px; margin: 18px 0 6px; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
a { color: #0b5cad; }
.lede { color: #4a4f57; margin: 0 0 12px; }
header nav ol { margin: 6px 0 0; padding-left: 22px; columns: 2; }
header details { margin: 6px 0; }
section.card { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; padding: 18px 22px;
  margin: 22px 0; }
.subtitle { color: #4a4f57; margin: 0 0 10px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0 14px; }
dl.facts dt { color: #5d636c; }
dl.facts dd { margin: 0; word-break: break-all; }
.charts { display: flex; flex-wrap: wrap; gap: 14px 22px; }
figure { margin: 6px 0; width: 540px; max-width: 100%; }
figcaption { color: #4a4f57; font-size: 12.5px; margin-top: 2px; }
figcaption strong { color: #1d1f23; }
.table-wrap { overflow-x: auto; margin: 10px 0; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { padding: 4px 6px; border-bottom: 1px solid #e6e8eb; text-align: right; white-space: nowrap; }
th { background: #f1f3f5; font-weight: 600; white-space: normal; vertical-align: bottom; }
th:first-child, td:first-child, td.text, th.text { text-align: left; }
/* Tables fit their cards: names break at any character where they must,
   and the verdict and reason cells wrap between words. */
td:first-child { white-space: normal; overflow-wrap: anywhere; min-width: 7em; }
td.verdict { white-space: normal; min-width: 9em; }
td.text { white-space: normal; overflow-wrap: anywhere; }
td.range { white-space: normal; }
td.wrap { white-space: normal; min-width: 260px; text-align: left; color: #4a4f57; font-size: 12px; }
tr.failed td { background: #fdf0ee; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px;
  vertical-align: baseline; }
.status-passed { color: #1e7b34; }
.status-failed { color: #c0392b; font-weight: 600; }
.status-other { color: #8a6d00; }
.above { color: #c0392b; font-weight: 600; }
ul.notes { color: #4a4f57; margin: 8px 0 0; padding-left: 20px; }
footer { color: #5d636c; font-size: 12.5px; margin-top: 28px; }
footer p { max-width: 900px; }
)css") + std::string(chart_css());
}

} // namespace kibench::report
