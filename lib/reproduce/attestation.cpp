#include "lib/reproduce/attestation.hpp"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "lib/compare/field_difference.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"

namespace kibench::reproduce {
namespace {

// The length of the UTF-8 sequence `lead` starts, and the UTF-16 code
// units its character takes (2 beyond the Basic Multilingual Plane).
std::pair<std::size_t, std::size_t> utf8_char(unsigned char lead) {
  if (lead < 0x80) return {1, 1};
  if ((lead >> 5) == 0x6) return {2, 1};
  if ((lead >> 4) == 0xE) return {3, 1};
  if ((lead >> 3) == 0x1E) return {4, 2};
  return {1, 1}; // a stray byte: counted as one character
}

std::size_t utf16_length(std::string_view text) {
  std::size_t units = 0;
  for (std::size_t at = 0; at < text.size();) {
    const auto [bytes, width] = utf8_char(static_cast<unsigned char>(text[at]));
    at += bytes;
    units += width;
  }
  return units;
}

std::string ms(double ns) {
  return fmt::format("{:.4g} ms", ns / 1e6);
}

std::string body_text(const Verdict &v) {
  std::string out = fmt::format("kibench {} reran this record: {} ({}) on {} ({} pass)", KIBENCH_VERSION,
                                v.implementation, v.implementation_from, v.workload, v.pass);
  if (v.here.samples > 0) out += fmt::format(", {} samples under kibench's protocol", v.here.samples);
  if (!v.here.digest.empty()) out += fmt::format("; its run {}", v.here.digest);
  out += ". ";
  if (v.ratio) {
    out += fmt::format("Median {} here vs {} in the record: {:.3f}x", ms(*v.here.median_ns),
                       ms(*v.original.median_ns), *v.ratio);
    if (v.ratio_interval)
      out += fmt::format(" [95 % CI {:.3f}, {:.3f}]", v.ratio_interval->low, v.ratio_interval->high);
    out += fmt::format(" ({}). ", v.interval_note);
  }
  out += fmt::format("Verdict: {} (rule {}, tolerance {:.1f} %). ", v.statement, v.rule, v.tolerance * 100);
  out += fmt::format("Environment: {}. ", v.environment_note);
  const auto add = [&](std::string_view what, const std::vector<compare::FieldDifference> &list) {
    if (!list.empty()) out += fmt::format("{} differs: {}. ", what, compare::join(list));
  };
  add("Environment", v.differences.environment);
  add("Software", v.differences.software);
  add("Protocol", v.differences.protocol);
  add("Implementation", v.differences.implementation);
  add("Workload", v.differences.workload);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

} // namespace

std::string fit_utf16(std::string_view text, std::size_t limit) {
  if (utf16_length(text) <= limit) return std::string(text);
  constexpr std::string_view ellipsis = "…"; // one UTF-16 code unit
  std::size_t units = 0, at = 0;
  while (at < text.size()) {
    const auto [bytes, width] = utf8_char(static_cast<unsigned char>(text[at]));
    if (units + width + 1 > limit || at + bytes > text.size()) break;
    units += width;
    at += bytes;
  }
  return std::string(text.substr(0, at)) + std::string(ellipsis);
}

void check_evidence_url(std::string_view url) {
  if (url.empty()) return;
  const bool spaced =
      std::any_of(url.begin(), url.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (!url.starts_with("https://") || url.size() == std::string_view("https://").size() || spaced)
    throw InputError(
        fmt::format("--evidence-url: {:?} is not a public https:// URL without spaces", io::printable(url)));
  if (utf16_length(url) > kEvidenceUrlLimit)
    throw InputError(fmt::format("--evidence-url: longer than {} characters", kEvidenceUrlLimit));
}

json::Value attestation_body(const Verdict &verdict, std::string_view evidence_url) {
  json::Object body{{"type", to_string(verdict.type)}, {"body", fit_utf16(body_text(verdict), kBodyLimit)}};
  if (!evidence_url.empty()) body.set("evidenceUrl", std::string(evidence_url));
  if (verdict.here.median_ns && *verdict.here.median_ns > 0)
    body.set("observedNs", std::round(*verdict.here.median_ns));
  const std::string summary = verdict.here.environment_summary.empty() ? std::string("kibench host")
                                                                       : verdict.here.environment_summary;
  body.set("environmentSummary", fit_utf16(summary, kEnvironmentSummaryLimit));
  return body;
}

} // namespace kibench::reproduce
