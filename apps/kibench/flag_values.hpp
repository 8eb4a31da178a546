// Numeric flag values read strictly: the whole text must be the number (no
// sign where none is allowed, no "nan" or "inf"), within the flag's range.
// Anything else is an InputError "<flag>: ..." (exit 2), before any work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kibench::cli {

// A whole number in [min, max].
std::uint64_t count_flag(std::string_view flag, const std::string &text, std::uint64_t min,
                         std::uint64_t max);

// A finite number in [min, max], or (min, max] when !min_allowed; `unit`
// names it in messages ("seconds").
double number_flag(std::string_view flag, const std::string &text, double min, double max, bool min_allowed,
                   std::string_view unit);

// A fraction in [0, max_fraction], or the same as a percentage: "0.5%" is
// 0.005, read from its decimal digits (0.5e-2) so that it is exactly the
// double "0.005" is. A bare value above max_fraction is refused with the
// percentage it probably meant ("did you mean 0.5%?").
double fraction_flag(std::string_view flag, const std::string &text, double max_fraction);

// A run label (--label): 1 to 64 characters, each a letter, a digit or one
// of . _ - + : @ / (so it reads the same in a table, a file name or a shell).
std::string label_flag(std::string_view flag, const std::string &text);

// Throws the InputError of a flag whose value is none of its names:
// "<flag>: "<text>" is not <one_of>".
[[noreturn]] void not_one_of(std::string_view flag, const std::string &text, std::string_view one_of);

// One of a flag's named values, read by `parse` (the value's own
// from_string, over its enum's name table); `one_of` lists the names for
// the message, from the same table (clock_target_names(): "base or max").
template <class Value>
Value choice_flag(std::string_view flag, const std::string &text, std::optional<Value> (*parse)(std::string_view),
                  std::string_view one_of) {
  if (const std::optional<Value> value = parse(text)) return *value;
  not_one_of(flag, text, one_of);
}

} // namespace kibench::cli
