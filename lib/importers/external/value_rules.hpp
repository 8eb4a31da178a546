// The value rules of the external-samples format that Field does not state
// by itself; each fails with an InputError naming the file and the path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lib/workload/field_reader.hpp"

namespace kibench::importers::external {

// KernelIndex's largest JSON integer, 2^53 - 1.
inline constexpr std::int64_t kMaxJsonInteger = 9007199254740991;

// A finite number > 0.
double positive_number(const detail::Field &field);
// A finite number >= 0.
double nonnegative_number(const detail::Field &field);
// A duration: a finite number > 0 (or >= 0 when `zero_allowed`) of at most
// `max` `unit`s (setting_ranges.hpp).
double duration(const detail::Field &field, double max, std::string_view unit, bool zero_allowed = false);
// An integer in [0, 2^53 - 1].
std::uint64_t count(const detail::Field &field);
// A non-empty string of at most max_chars characters.
const std::string &nonempty_string(const detail::Field &field, std::size_t max_chars);
// ^[a-z0-9][a-z0-9-]*$, at most 100 characters: names that become parts of
// file names, run names and labels unchanged.
const std::string &name_token(const detail::Field &field);

bool is_name_token(std::string_view text);

} // namespace kibench::importers::external
