// What compare reads from a BenchmarkProtocol beyond its digest: the
// smallest effect it calls a win and whether its samples were interleaved.
// Both are stated in prose in spec.comparability.notes (kibench writes
// "A difference smaller than 0.01 relative is not called a win." and
// "interleaved round by round: yes"); other sources may write
// "minimum effect 2 %".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::compare {

inline constexpr double kDefaultMinimumEffect = 0.01;

// The relative minimum effect stated in `notes`, if any: "smaller than X
// relative" (X a fraction) or "smaller than X %" / "minimum effect [of|:] X
// [%|relative]".
std::optional<double> minimum_effect_in(std::string_view notes);

// spec.comparability.notes of a protocol manifest ("" when absent).
std::string_view comparability_notes(const json::Value &protocol);

// False only when the notes say the samples were not interleaved
// ("interleaved round by round: no"): then equal rounds of two runs were
// not taken together and must not be paired.
bool states_interleaving(std::string_view notes);

// True when the notes say the order within a round changes from round to
// round (kibench: "in a Williams-design order that changes each round").
// With a fixed order each implementation always samples in the same place
// of the round, after the same neighbour, and pairing by round does not
// cancel what that place costs it (measured: ~2 % between two GEMM-bound
// implementations on a power-limited GPU; docs/perf.md, 2026-12-04).
bool states_rotated_order(std::string_view notes);

// The sampling settings kibench states in its notes
// (ProtocolSettings::describe), by the names the differences show:
// pass, cache, minSamples, maxSamples, minTime, maxNoise, timeout,
// interleaved, shareRounds, powerState, throttleFraction, minimumEffect
// (warm-up and timer are structured fields of the protocol and named
// there).
struct NotesSetting {
  std::string name;
  std::string value; // as the notes state it, with its unit ("0.5 s")
};

struct NotesReading {
  std::vector<NotesSetting> settings; // those found, in the order above
  std::string rest;                   // the notes with every value found masked: what else they say
};

// Notes longer than this (KernelIndex allows 1000 characters; kibench's own
// are about 900) are compared as text only: the settings and the minimum
// effect are read from them with std::regex, whose recursion overflows the
// stack on a long string (at 8000 characters under AddressSanitizer).
inline constexpr std::size_t kMaxReadNotesChars = 2000;

NotesReading read_notes_settings(std::string_view notes);

} // namespace kibench::compare
