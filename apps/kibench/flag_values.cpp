#include "apps/kibench/flag_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/core.h>

#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/io/text_rules.hpp"

namespace kibench::cli {

namespace {

// The whole of `text` as a finite double; nullopt otherwise.
std::optional<double> finite_number(std::string_view text) {
  double value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || error != std::errc{} || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// "0.5%" as the fraction it names, shifting the decimal exponent by two
// rather than dividing by 100 (which can round differently).
std::optional<double> percentage(std::string_view digits) {
  std::string shifted(digits);
  const std::size_t e = shifted.find_first_of("eE");
  if (e == std::string::npos) {
    shifted += "e-2";
  } else {
    int exponent = 0;
    const char *end = shifted.data() + shifted.size();
    const auto [stop, error] = std::from_chars(shifted.data() + e + 1, end, exponent);
    if (error != std::errc{} || stop != end || exponent < -100000 || exponent > 100000) return std::nullopt;
    shifted = fmt::format("{}e{}", shifted.substr(0, e), exponent - 2);
  }
  return finite_number(shifted);
}

std::string interval(double min, double max, bool min_allowed) {
  return fmt::format("{}{}, {}]", min_allowed ? "[" : "(", min, max);
}

} // namespace

std::uint64_t count_flag(std::string_view flag, const std::string &text, std::uint64_t min,
                         std::uint64_t max) {
  std::uint64_t value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only || error != std::errc{} || stop != end || value < min || value > max)
    throw InputError(
        fmt::format("{}: \"{}\" is not a whole number in [{}, {}]", flag, io::excerpt(text), min, max));
  return value;
}

double number_flag(std::string_view flag, const std::string &text, double min, double max, bool min_allowed,
                   std::string_view unit) {
  const std::optional<double> value = finite_number(text);
  if (!value || *value > max || *value < min || (!min_allowed && *value == min))
    throw InputError(fmt::format("{}: \"{}\" is not a number of {} in {}", flag, io::excerpt(text), unit,
                                 interval(min, max, min_allowed)));
  return *value;
}

double fraction_flag(std::string_view flag, const std::string &text, double max_fraction) {
  if (text.ends_with('%')) {
    const std::optional<double> value = percentage(std::string_view(text).substr(0, text.size() - 1));
    if (!value || *value < 0 || *value > max_fraction)
      throw InputError(fmt::format("{}: \"{}\" is not a percentage in [0%, {}%]", flag, io::excerpt(text),
                                   max_fraction * 100));
    return *value;
  }
  const std::optional<double> value = finite_number(text);
  if (value && *value > max_fraction) {
    const std::optional<double> as_percentage = percentage(text);
    const bool likely = as_percentage && *as_percentage <= max_fraction;
    throw InputError(fmt::format("{}: {} is a fraction above {} ({}%){}", flag, io::excerpt(text),
                                 max_fraction, max_fraction * 100,
                                 likely ? fmt::format("; did you mean {}%?", text) : ""));
  }
  if (!value || *value < 0)
    throw InputError(fmt::format("{}: \"{}\" is not a fraction in [0, {}] nor a percentage such as 0.5%",
                                 flag, io::excerpt(text), max_fraction));
  return *value;
}

std::string label_flag(std::string_view flag, const std::string &text) {
  constexpr std::size_t kMaxLabel = 64;
  const bool allowed = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("._-+:@/").find(c) != std::string_view::npos;
  });
  if (text.empty() || text.size() > kMaxLabel || !allowed)
    throw InputError(fmt::format("{}: {:?} is not a label: 1 to {} letters, digits or . _ - + : @ /", flag,
                                 io::excerpt(text), kMaxLabel));
  return text;
}

void not_one_of(std::string_view flag, const std::string &text, std::string_view one_of) {
  throw InputError(fmt::format("{}: {:?} is not {}", flag, io::printable(io::excerpt(text)), one_of));
}

} // namespace kibench::cli
