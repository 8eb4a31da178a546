#include "lib/compare/protocol_differences.hpp"

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/protocol_terms.hpp"
#include "lib/io/terminal_text.hpp"

namespace kibench::compare {
namespace {

const json::Value &spec_of(const json::Value &manifest) {
  static const json::Value empty = json::Object{};
  const json::Value *spec = manifest.find("spec");
  return spec != nullptr ? *spec : empty;
}

const NotesSetting *find_setting(const NotesReading &reading, const std::string &name) {
  for (const NotesSetting &setting : reading.settings) {
    if (setting.name == name) return &setting;
  }
  return nullptr;
}

// The sentence of `text` that holds byte `at` ("." ends one).
std::string sentence_at(const std::string &text, std::size_t at) {
  const std::size_t begin = at == 0 ? 0 : text.rfind(". ", at - 1);
  const std::size_t start = begin == std::string::npos || at == 0 ? 0 : begin + 2;
  const std::size_t end = text.find(". ", at);
  std::string sentence = text.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
  return sentence.empty() ? std::string(kAbsent) : sentence;
}

// The sentences of `text`, each with its full stop (". " separates them).
std::vector<std::string> sentences_of(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find(". ", start);
    if (end == std::string_view::npos) {
      out.emplace_back(text.substr(start));
      break;
    }
    out.emplace_back(text.substr(start, end + 1 - start));
    start = end + 2;
  }
  return out;
}

// `masked` is a sentence of the notes with their settings' values replaced
// by "{}" (read_notes_settings): the sentence of `notes` it was made from,
// values and all, so a reader sees what the protocol says rather than a
// template; `masked` itself where no sentence matches.
std::string unmasked_sentence(std::string_view notes, const std::string &masked) {
  if (masked.find("{}") == std::string::npos || notes.size() > kMaxReadNotesChars) return masked;
  std::string pattern = "^";
  for (std::size_t i = 0; i < masked.size(); ++i) {
    if (masked.compare(i, 2, "{}") == 0) {
      pattern += "(.+?)";
      ++i;
    } else {
      if (std::string_view("\\^$.|?*+()[]{}").find(masked[i]) != std::string_view::npos) pattern += '\\';
      pattern += masked[i];
    }
  }
  pattern += "$";
  const std::regex sentence(pattern);
  for (const std::string &candidate : sentences_of(notes))
    if (std::regex_match(candidate, sentence)) return candidate;
  return masked;
}

// The notes' own settings by name; then, if they still differ once those
// are masked, their first differing sentence.
void notes_differences(std::string_view a, std::string_view b, std::vector<FieldDifference> &out) {
  if (a == b) return;
  const NotesReading first = read_notes_settings(a);
  const NotesReading second = read_notes_settings(b);
  for (const NotesSetting &setting : first.settings) {
    const NotesSetting *other = find_setting(second, setting.name);
    if (other == nullptr || other->value != setting.value)
      out.push_back({setting.name, io::printable(setting.value),
                     other != nullptr ? io::printable(other->value) : std::string(kAbsent)});
  }
  for (const NotesSetting &setting : second.settings) {
    if (find_setting(first, setting.name) == nullptr)
      out.push_back({setting.name, std::string(kAbsent), io::printable(setting.value)});
  }
  if (first.rest == second.rest) return;
  std::size_t at = 0;
  while (at < first.rest.size() && at < second.rest.size() && first.rest[at] == second.rest[at]) ++at;
  out.push_back({"comparability.notes", shown_value(json::Value(unmasked_sentence(a, sentence_at(first.rest, at)))),
                 shown_value(json::Value(unmasked_sentence(b, sentence_at(second.rest, at))))});
}

std::string notes_of(const json::Value &spec) {
  const json::Value *comparability = spec.find("comparability");
  const json::Value *notes = comparability != nullptr ? comparability->find("notes") : nullptr;
  return notes != nullptr && notes->is_string() ? notes->as_string() : std::string{};
}

} // namespace

std::vector<FieldDifference> protocol_differences(const json::Value &a, const json::Value &b) {
  const json::Value &first = spec_of(a);
  const json::Value &second = spec_of(b);
  std::vector<FieldDifference> out = leaf_differences(first, second, {"comparability.notes"});
  notes_differences(notes_of(first), notes_of(second), out);
  return out;
}

} // namespace kibench::compare
