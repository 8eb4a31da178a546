#include "lib/importers/liger/speed_row.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/importers/liger/skip_reason.hpp"
#include "lib/json/parse.hpp"

namespace kibench::importers::liger {
namespace {

[[noreturn]] void malformed(const std::string &message) {
  throw RowSkipped(SkipReason::malformed, message);
}

// A decimal number written in full ("213.1598663330078", "4096", "1e-3");
// "nan" and "inf" (any case, signed) are numbers too, not finite ones, as
// Python writes them. nullopt for anything else, surrounding spaces
// included.
std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (error == std::errc::result_out_of_range) {
    // from_chars refuses magnitudes beyond double; Python reads them as inf
    // or 0, neither of which imports, so call them what they are.
    return std::numeric_limits<double>::infinity();
  }
  if (error != std::errc{} || stop != end) return std::nullopt;
  return value;
}

double number_column(const CsvHeader &header, const CsvRecord &record, std::string_view column) {
  const std::string &text = header.field(record, column);
  const auto value = parse_number(text);
  if (!value) malformed(fmt::format("{}: \"{}\" is not a number", column, text));
  return *value;
}

// A number that goes into a manifest as it is: JSON has no NaN or infinity,
// so one that is not finite makes the row malformed (1e400 reads as inf).
double finite_number_column(const CsvHeader &header, const CsvRecord &record, std::string_view column) {
  const double value = number_column(header, record, column);
  if (!std::isfinite(value))
    malformed(fmt::format("{}: \"{}\" is not a finite number", column, header.field(record, column)));
  return value;
}

// p20 and p80 may be missing: KernelIndex then records no spread.
double optional_number_column(const CsvHeader &header, const CsvRecord &record, std::string_view column) {
  if (header.field(record, column).empty()) return std::numeric_limits<double>::quiet_NaN();
  return number_column(header, record, column);
}

std::string text_column(const CsvHeader &header, const CsvRecord &record, std::string_view column) {
  const std::string &text = header.field(record, column);
  if (text.empty()) malformed(fmt::format("{}: empty", column));
  return text;
}

json::Object config_column(const CsvHeader &header, const CsvRecord &record) {
  static constexpr std::string_view kColumn = "extra_benchmark_config_str";
  json::Value config;
  try {
    config = json::parse(header.field(record, kColumn), kColumn);
  } catch (const InputError &e) {
    malformed(e.what());
  }
  if (!config.is_object())
    malformed(fmt::format("{}: $: expected a JSON object, not {}", kColumn, config.type_name()));
  return config.as_object();
}

} // namespace

SpeedRow read_speed_row(const CsvHeader &header, const CsvRecord &record) {
  SpeedRow row{
      .line = record.line,
      .kernel = text_column(header, record, "kernel_name"),
      .provider = text_column(header, record, "kernel_provider"),
      .mode = text_column(header, record, "kernel_operation_mode"),
      .x_name = text_column(header, record, "x_name"),
      .x_value = finite_number_column(header, record, "x_value"),
      .ms = {},
      .config = config_column(header, record),
      .gpu_name = text_column(header, record, "gpu_name"),
      .timestamp =
          [&] {
            const std::string &text = header.field(record, "timestamp");
            auto parsed = CsvTimestamp::parse(text);
            if (!parsed) malformed(fmt::format("timestamp: \"{}\" is not \"YYYY-MM-DD HH:MM:SS\"", text));
            return *std::move(parsed);
          }(),
      .liger_version = header.field(record, "liger_version"),
  };
  if (const std::string &unit = header.field(record, "metric_unit"); unit != "ms")
    malformed(fmt::format("metric_unit: \"{}\" (speed rows are in ms)", unit));
  row.ms.p50 = number_column(header, record, "y_value_50");
  row.ms.p20 = optional_number_column(header, record, "y_value_20");
  row.ms.p80 = optional_number_column(header, record, "y_value_80");
  return row;
}

} // namespace kibench::importers::liger
