#include "lib/compare/protocol_terms.hpp"

#include <regex>
#include <string>

namespace kibench::compare {

std::optional<double> minimum_effect_in(std::string_view notes) {
  // "smaller than 0.01 relative", "smaller than 1 %", "minimum effect of 2%",
  // "minimum effect: 0.5 %"; the unit decides the scale.
  static const std::regex pattern(
      R"((smaller than|minimum effect(?: of|:)?)\s*([0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(%|relative))",
      std::regex::icase);
  const std::string text(notes);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  const double value = std::stod(match[2].str());
  return match[3].str() == "%" ? value / 100.0 : value;
}

std::string_view comparability_notes(const json::Value &protocol) {
  const json::Value *spec = protocol.find("spec");
  const json::Value *comparability = spec != nullptr ? spec->find("comparability") : nullptr;
  const json::Value *notes = comparability != nullptr ? comparability->find("notes") : nullptr;
  return notes != nullptr && notes->is_string() ? std::string_view(notes->as_string()) : std::string_view{};
}

bool states_rotated_order(std::string_view notes) {
  return notes.find("order that changes each round") != std::string_view::npos;
}

bool states_interleaving(std::string_view notes) {
  return notes.find("interleaved round by round: no") == std::string_view::npos;
}

} // namespace kibench::compare
