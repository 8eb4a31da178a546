#pragma once
// An enum's names as one table, read both ways: the text kibench writes
// (manifests, flags, messages) and the value a reader parses back. Each
// name is spelled once, in its enum's table.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kibench {

template <class Enum> struct EnumName {
  Enum value;
  std::string_view name;
};

// `value`'s name in `table`, or `fallback` for a value the table lacks
// (every declared value is in its table: only a corrupted one is not).
template <class Enum, std::size_t N>
[[nodiscard]] constexpr std::string_view name_in(const EnumName<Enum> (&table)[N], Enum value,
                                                 std::string_view fallback) {
  for (const EnumName<Enum> &entry : table)
    if (entry.value == value) return entry.name;
  return fallback;
}

// The value named `name` in `table`, or nullopt.
template <class Enum, std::size_t N>
[[nodiscard]] constexpr std::optional<Enum> value_named(const EnumName<Enum> (&table)[N], std::string_view name) {
  for (const EnumName<Enum> &entry : table)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

// The table's names in order, joined by ", ", the last two by
// `last_separator` (for messages that list what a field accepts).
template <class Enum, std::size_t N>
[[nodiscard]] std::string names_joined(const EnumName<Enum> (&table)[N], std::string_view last_separator = ", ") {
  std::string out;
  for (std::size_t k = 0; k < N; ++k) {
    if (k > 0) out += k + 1 == N ? last_separator : std::string_view(", ");
    out += table[k].name;
  }
  return out;
}

// The same as a sentence lists alternatives: "a, b or c" (for a flag's
// refusal: the names come from the table, so a new value reaches the
// message).
template <class Enum, std::size_t N> [[nodiscard]] std::string names_listed(const EnumName<Enum> (&table)[N]) {
  return names_joined(table, " or ");
}

} // namespace kibench
