// The names KernelIndex's Liger import gives a row: its case key, its run's
// metadata.name and its external id (kernelindex/liger/README.md, rules 7-9).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kibench::importers::liger {

// Orders axis names as KernelIndex's case keys do: '_' before digits before
// letters (not ASCII order, where digits come first), a prefix first.
bool case_key_less(std::string_view a, std::string_view b);

// Axes sorted by case_key_less, each name+value, joined with '-', then
// '-' + dtype: "hidden4096-tokens8192-vocab128256-bf16".
std::string case_key(std::vector<std::pair<std::string, std::int64_t>> axes, std::string_view dtype);

// Lowercase, every run of characters outside [a-z0-9] becomes '-', dashes
// trimmed, then cut to 100 characters. The cut comes last, so a name may end
// in '-': the seed's run is "...-bf16-2024-". (kibench::kebab trims after
// cutting, which suits kibench's own names but not KernelIndex's imports.)
std::string import_kebab(std::string_view text);

struct RunIdentity {
  std::string kernel;
  std::string mode;
  std::string provider;
  std::string gpu_name;
  std::string case_key;
  std::string timestamp; // as in the CSV: "2024-12-03 08:00:25"
};

// import_kebab("liger-<kernel>-<mode>-<provider>-<gpu>-<case key>-<timestamp>").
std::string run_name(const RunIdentity &identity);

// "<kernel>/<mode>/<provider>/<kebab gpu>/<case key>/<timestamp, ':' and
// ' ' as '-'>".
std::string external_id(const RunIdentity &identity);

} // namespace kibench::importers::liger
