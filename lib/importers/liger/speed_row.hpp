// One row of Liger-Kernel's benchmark CSV, its columns read and checked:
// the step between CSV text and KernelIndex records.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "lib/importers/csv_table.hpp"
#include "lib/importers/liger/csv_timestamp.hpp"
#include "lib/json/value.hpp"

namespace kibench::importers::liger {

// The columns the import reads (x_label, a caption, is not one of them).
inline constexpr std::array<std::string_view, 14> kRequiredColumns{
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
};

// do_bench's quantiles in milliseconds, as the CSV has them. A quantile the
// CSV leaves empty or writes as nan/inf is not finite.
struct QuantilesMs {
  double p50 = 0;
  double p20 = 0;
  double p80 = 0;
};

struct SpeedRow {
  std::size_t line = 0;
  std::string kernel;
  std::string provider;
  std::string mode;
  std::string x_name;
  double x_value = 0;
  QuantilesMs ms;
  json::Object config; // extra_benchmark_config_str, parsed
  std::string gpu_name;
  CsvTimestamp timestamp;
  std::string liger_version;
};

// Reads a speed row (metric_name "speed", metric_unit "ms"). Throws
// RowSkipped(malformed) naming the column: a number that is not one, config
// text that is not a JSON object, a timestamp not "YYYY-MM-DD HH:MM:SS".
SpeedRow read_speed_row(const CsvHeader &header, const CsvRecord &record);

} // namespace kibench::importers::liger
