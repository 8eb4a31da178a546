#include "lib/compare/protocol_terms.hpp"

#include <charconv>
#include <cmath>
#include <regex>
#include <string>

#include "lib/harness/protocol_settings.hpp"

namespace kibench::compare {

std::optional<double> minimum_effect_in(std::string_view notes) {
  // "smaller than 0.01 relative", "smaller than 1 %", "minimum effect of 2%",
  // "minimum effect: 0.5 %"; the unit decides the scale.
  static const std::regex pattern(
      R"((smaller than|minimum effect(?: of|:)?)\s*([0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*(%|relative))",
      std::regex::icase);
  if (notes.size() > kMaxReadNotesChars) return std::nullopt;
  const std::string text(notes);
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return std::nullopt;
  const std::string digits = match[2].str();
  double value = 0;
  // 1e999 is out of range: not a stated effect (std::stod would throw).
  if (const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      error != std::errc() || !std::isfinite(value))
    return std::nullopt;
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

namespace kibench::compare {
namespace {

// One setting in kibench's sentence: the pattern's first group is the
// value; `unit` is appended to it when shown.
struct SettingPattern {
  const char *name;
  const char *pattern;
  const char *unit;
};

// The sentence of ProtocolSettings::describe, a clause at a time.
// warmupIterations and the timer are also structured fields
// (spec.measurement) and are named there, so they are masked (name empty)
// but not reported twice.
constexpr SettingPattern kSettingPatterns[] = {
    {"pass", R"(Timed: the (\w+) pass)", ""},
    {"", R"(, with ([A-Za-z0-9_]+) \()", ""},
    {"cache",
     R"((the GPU L2 cache flushed \(a write of twice its size\) before every sample|caches left warm between samples))",
     ""},
    {"", R"((\d+) untimed warm-up invocations)", ""},
    {"maxNoise", R"(is at most ([0-9.eE+-]+) after)", ""},
    {"minSamples", R"(after at least (\d+) samples)", ""},
    {"minTime", R"(and ([0-9.eE+-]+) s of sampled time)", " s"},
    {"maxSamples", R"(or at (\d+) samples)", ""},
    {"timeout", R"(or after ([0-9.eE+-]+) s\.)", " s"},
    {"interleaved", R"(interleaved round by round: (yes, in a Williams-design order[^.]*\)|yes|no))", ""},
    {"throttleFraction", R"(SM clock is under ([0-9.eE+-]+) of the highest)", ""},
    {"minimumEffect", R"(smaller than ([0-9.eE+-]+) relative)", ""},
};

// Stated only when on (ProtocolSettings::share_rounds): this build's
// sentence, and the longer one of the runs made before 2026-12-04 22:00 UTC.
constexpr std::string_view kEarlierShareRoundsSentence =
    " Every implementation samples in every round until the last one's rule is met (its own cap or time "
    "limit aside).";

// Stated only when not as-is (ProtocolSettings::power_state): "as-is" when
// absent. This build's own sentence is removed whole; another wording keeps
// its other words in the rest, where a difference in them shows.
std::string take_power_state(std::string &rest) {
  static const std::regex pattern(R"( Samples start (rested|loaded) \()");
  std::smatch match;
  if (!std::regex_search(rest, match, pattern)) return "as-is";
  const std::string state = match[1].str();
  const std::string sentence = ProtocolSettings::describe_power_state(*power_state_from_string(state));
  if (const std::size_t at = rest.find(sentence); at != std::string::npos) {
    rest.erase(at, sentence.size());
  } else {
    rest.replace(static_cast<std::size_t>(match.position(1)), static_cast<std::size_t>(match.length(1)),
                 "{}");
  }
  return state;
}

std::string cache_state(const std::string &clause) {
  return clause.starts_with("the GPU L2") ? "cold (L2 flushed)" : "warm";
}

} // namespace

NotesReading read_notes_settings(std::string_view notes) {
  NotesReading out;
  std::string rest(notes);
  if (notes.size() > kMaxReadNotesChars) {
    out.rest = std::move(rest);
    return out;
  }
  bool kibench_sentence = false;
  for (const SettingPattern &setting : kSettingPatterns) {
    const std::regex pattern(setting.pattern);
    std::smatch match;
    if (!std::regex_search(rest, match, pattern)) continue;
    kibench_sentence = true;
    std::string value = match[1].str();
    const auto begin = match.position(1);
    const auto length = match.length(1);
    rest.replace(static_cast<std::size_t>(begin), static_cast<std::size_t>(length), "{}");
    if (*setting.name == '\0') continue;
    if (std::string_view(setting.name) == "cache") value = cache_state(value);
    if (std::string_view(setting.name) == "interleaved" && value.starts_with("yes, "))
      value = "yes (Williams-design order)";
    out.settings.push_back({setting.name, value + setting.unit});
  }
  if (kibench_sentence) {
    bool shared = false;
    for (const std::string_view sentence : {kShareRoundsSentence, kEarlierShareRoundsSentence}) {
      const std::size_t at = rest.find(sentence);
      if (at == std::string::npos) continue;
      rest.erase(at, sentence.size());
      shared = true;
      break;
    }
    out.settings.push_back({"shareRounds", shared ? "yes" : "no"});
    out.settings.push_back({"powerState", take_power_state(rest)});
  }
  out.rest = std::move(rest);
  return out;
}

} // namespace kibench::compare
