#include "lib/importers/external/value_rules.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kibench::importers::external {

double positive_number(const detail::Field &field) {
  const json::Value &value = field.value();
  if (!value.is_number())
    field.fail(fmt::format("expected a positive finite number, got {}", value.type_name()));
  const double x = field.number();
  if (!(x > 0.0)) field.fail(fmt::format("expected a positive finite number, got {}", x));
  return x;
}

double nonnegative_number(const detail::Field &field) {
  const double x = field.number();
  if (x < 0.0) field.fail(fmt::format("expected a number >= 0, got {}", x));
  return x;
}

double duration(const detail::Field &field, double max, std::string_view unit, bool zero_allowed) {
  const double x = zero_allowed ? nonnegative_number(field) : positive_number(field);
  if (x > max) field.fail(fmt::format("{} {} is longer than the {} {} allowed", x, unit, max, unit));
  return x;
}

std::uint64_t count(const detail::Field &field) {
  return static_cast<std::uint64_t>(field.integer(0, kMaxJsonInteger));
}

const std::string &nonempty_string(const detail::Field &field, std::size_t max_chars) {
  const std::string &text = field.bounded_string(max_chars);
  if (text.empty()) field.fail("expected a non-empty string");
  return text;
}

bool is_name_token(std::string_view text) {
  const auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  return !text.empty() && text.size() <= 100 && text.front() != '-' &&
         std::all_of(text.begin(), text.end(), allowed);
}

const std::string &name_token(const detail::Field &field) {
  const std::string &text = field.string();
  if (!is_name_token(text))
    field.fail(fmt::format("{:?} is not a name: expected [a-z0-9][a-z0-9-]*, at most 100 characters", text));
  return text;
}

} // namespace kibench::importers::external
