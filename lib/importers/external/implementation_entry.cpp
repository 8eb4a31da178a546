#include "lib/importers/external/implementation_entry.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "lib/harness/setting_ranges.hpp"
#include "lib/importers/external/value_rules.hpp"
#include "lib/io/text_rules.hpp"

namespace kibench::importers::external {
namespace {

using detail::Field;
using detail::ObjectReader;

constexpr std::array<std::string_view, 3> kStopReasons{"noise_target", "max_samples", "timeout"};

// KernelIndex wants callable.language and callable.interface as
// identifiers; harnesses write what their language calls them
// ("torch.nn.Module"). Lowercased, every run of other characters as one '_',
// trimmed: "torch_nn_module".
std::string identifier_form(const Field &field) {
  const std::string &text = nonempty_string(field, 200);
  std::string out;
  for (const char c : text) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) {
      out += lower;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (!detail::is_identifier(out))
    field.fail(
        fmt::format("{:?} does not make an identifier [a-z][a-z0-9_]* (it must start with a letter)", text));
  return out;
}

// An error that JSON cannot hold as a number (an infinite relative error
// where the reference is zero, an output missing altogether) is written
// null.
double error_value(const Field &field) {
  if (field.value().is_null()) return std::numeric_limits<double>::infinity();
  return nonnegative_number(field);
}

std::vector<Sample> read_samples(const Field &field) {
  std::vector<Sample> samples;
  const std::size_t n = field.array().size();
  if (n == 0) field.fail("expected at least one sample");
  for (std::size_t k = 0; k < n; ++k) {
    const Field element = field.element(k);
    const ObjectReader entry(element, {"round", "ns", "smClockMHz"});
    Sample s;
    const Field round = entry.required("round");
    s.round = static_cast<std::size_t>(count(round));
    // One sample per implementation per round, in order: the pairing of
    // `kibench compare` matches rounds, so a repeated round would pair twice.
    if (k > 0 && s.round <= samples.back().round)
      round.fail(fmt::format("round {} after round {}: rounds must increase from sample to sample", s.round,
                             samples.back().round));
    // Samples are recorded in whole ns: 0.4 ns would be written as 0.
    const Field ns = entry.required("ns");
    s.ns = duration(ns, setting_ranges::kMaxSampleNs, "ns");
    if (s.ns < 1.0)
      ns.fail(fmt::format("{} ns is shorter than 1 ns, the unit samples are recorded in", s.ns));
    if (const auto clock = entry.optional("smClockMHz"); clock && !clock->value().is_null()) {
      s.clock_mhz = positive_number(*clock);
      // One absurd clock would make every other sample look throttled.
      if (*s.clock_mhz > setting_ranges::kMaxSmClockMhz)
        clock->fail(fmt::format("{} MHz is above the {} MHz an SM clock may be", *s.clock_mhz,
                                setting_ranges::kMaxSmClockMhz));
    }
    samples.push_back(s);
  }
  return samples;
}

MemoryUse read_memory(const Field &field) {
  const ObjectReader memory(field, {"peakBytes", "inputBytes", "outputBytes", "workspaceBytes"});
  MemoryUse use;
  use.peak_bytes = count(memory.required("peakBytes"));
  use.input_bytes = count(memory.required("inputBytes"));
  use.output_bytes = count(memory.required("outputBytes"));
  const Field workspace = memory.required("workspaceBytes");
  use.workspace_bytes = count(workspace);
  // The workspace is part of the peak, as `kibench run` measures both.
  if (use.workspace_bytes > use.peak_bytes)
    workspace.fail(fmt::format("{} is more than peakBytes ({}): the workspace is part of the peak",
                               use.workspace_bytes, use.peak_bytes));
  return use;
}

void read_errors(const Field &field, ImplementationEntry &entry) {
  const std::size_t n = field.array().size();
  if (n == 0) field.fail("expected at least one compared output");
  for (std::size_t k = 0; k < n; ++k) {
    const ObjectReader reader(field.element(k),
                              {"output", "count", "maxAbsError", "relL2Error", "refL2Norm", "nonfinite"});
    ErrorStats stats;
    const Field output = reader.required("output");
    stats.output = output.string();
    if (!detail::is_identifier(stats.output))
      output.fail(fmt::format("{:?} is not an output name [a-z][a-z0-9_]*", stats.output));
    const auto seen = std::find_if(entry.errors.begin(), entry.errors.end(),
                                   [&](const ErrorStats &e) { return e.output == stats.output; });
    if (seen != entry.errors.end()) output.fail(fmt::format("output {:?} is listed twice", stats.output));
    stats.count = static_cast<std::int64_t>(count(reader.required("count")));
    stats.max_abs_error = error_value(reader.required("maxAbsError"));
    stats.rel_l2_error = error_value(reader.required("relL2Error"));
    stats.ref_l2_norm = nonnegative_number(reader.required("refL2Norm"));
    stats.nonfinite = static_cast<std::int64_t>(count(reader.required("nonfinite")));
    entry.errors.push_back(std::move(stats));
    entry.error_paths.push_back(output.path());
  }
}

ProjectRef read_project(const Field &field) {
  const ObjectReader project(field, {"name", "version"});
  return {nonempty_string(project.required("name"), 200), nonempty_string(project.required("version"), 100)};
}

CallableRef read_callable(const Field &field) {
  const ObjectReader callable(field, {"language", "path", "symbol", "interface"});
  return {identifier_form(callable.required("language")), nonempty_string(callable.required("path"), 500),
          nonempty_string(callable.required("symbol"), 200), identifier_form(callable.required("interface"))};
}

// Package versions, kept as the revision's build requirements: their keys
// must be KernelIndex identifiers.
std::vector<std::pair<std::string, std::string>> read_software(const Field &field) {
  if (!field.value().is_object())
    field.fail(fmt::format("expected an object, got {}", field.value().type_name()));
  std::vector<std::pair<std::string, std::string>> software;
  for (const auto &[package, version] : field.value().as_object()) {
    const Field member(version, detail::member_path(field.path(), package), field.source());
    if (package.size() > 100 || !detail::is_identifier(package))
      member.fail(fmt::format("package name {:?} is not [a-z][a-z0-9_]* of at most 100 characters (write "
                              "liger_kernel, not liger-kernel)",
                              io::excerpt(package)));
    software.emplace_back(package, nonempty_string(member, 200));
  }
  return software;
}

} // namespace

ImplementationEntry read_implementation_entry(const Field &field) {
  const ObjectReader reader(field,
                            {"name", "kibenchImplementation", "title", "description", "project", "callable",
                             "software", "stopReason", "samples", "memory", "loss", "errors"});
  ImplementationEntry entry;
  entry.path = field.path();
  entry.name = name_token(reader.required("name"));
  entry.kibench_implementation = reader.required("kibenchImplementation").boolean();

  // A kibench implementation's revision is the run directory's; what the
  // file says about it is checked but not used.
  const auto describing = [&](std::string_view key) {
    return entry.kibench_implementation ? reader.optional(key) : std::optional(reader.required(key));
  };
  ExternalDescription description;
  if (const auto title = describing("title")) description.title = nonempty_string(*title, 200);
  if (const auto text = describing("description")) description.description = nonempty_string(*text, 2000);
  if (const auto project = describing("project")) description.project = read_project(*project);
  if (const auto callable = describing("callable")) description.callable = read_callable(*callable);
  if (const auto software = describing("software")) description.software = read_software(*software);
  if (!entry.kibench_implementation) entry.description = std::move(description);

  const Field stop = reader.required("stopReason");
  entry.measurement.implementation = entry.name;
  entry.measurement.stop_reason = stop.string();
  if (std::find(kStopReasons.begin(), kStopReasons.end(), entry.measurement.stop_reason) ==
      kStopReasons.end())
    stop.fail(fmt::format("{:?} is not noise_target, max_samples or timeout", entry.measurement.stop_reason));
  entry.measurement.samples = read_samples(reader.required("samples"));
  entry.memory = read_memory(reader.required("memory"));
  if (const Field loss = reader.required("loss"); !loss.value().is_null()) entry.loss = loss.number();
  read_errors(reader.required("errors"), entry);
  return entry;
}

} // namespace kibench::importers::external
