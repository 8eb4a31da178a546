#include "lib/importers/external/external_result.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/importers/external/invocation_time.hpp"
#include "lib/importers/external/settings_reader.hpp"
#include "lib/importers/external/value_rules.hpp"
#include "lib/json/parse.hpp"

namespace kibench::importers::external {
namespace {

using detail::Field;
using detail::ObjectReader;

std::string read_digest(const Field &field) {
  const std::string &text = field.string();
  if (!is_sha256_digest(text)) field.fail(fmt::format("{:?} is not sha256:<64 lowercase hex digits>", text));
  return text;
}

std::vector<InputFile> read_inputs(const Field &field) {
  std::vector<InputFile> inputs;
  const std::size_t n = field.array().size();
  if (n == 0) field.fail("expected at least one input tensor");
  for (std::size_t k = 0; k < n; ++k) {
    const Field element = field.element(k);
    const ObjectReader reader(element, {"tensor", "file", "sha256"});
    InputFile input;
    const Field tensor = reader.required("tensor");
    input.tensor = tensor.string();
    if (!detail::is_identifier(input.tensor))
      tensor.fail(fmt::format("{:?} is not a tensor name [a-z][a-z0-9_]*", input.tensor));
    if (std::any_of(inputs.begin(), inputs.end(),
                    [&](const InputFile &i) { return i.tensor == input.tensor; }))
      tensor.fail(fmt::format("tensor {:?} is listed twice", input.tensor));
    input.file = nonempty_string(reader.required("file"), 500);
    // Bare hex is what sha256sum and hashlib print; kibench's tensor index
    // writes the prefixed form. Both name the same bytes.
    const Field sha = reader.required("sha256");
    const std::string &text = sha.string();
    input.sha256 = text.starts_with("sha256:") ? text : "sha256:" + text;
    if (!is_sha256_digest(input.sha256))
      sha.fail(fmt::format("{:?} is not 64 lowercase hex digits (optionally after sha256:)", text));
    input.path = element.path();
    inputs.push_back(std::move(input));
  }
  return inputs;
}

// The stop reason must be one the stopping rule could have given for this
// many samples under these settings.
void check_stop_reason(const ImplementationEntry &entry, const ProtocolSettings &s,
                       const std::string &source) {
  const std::size_t n = entry.measurement.samples.size();
  const std::string &reason = entry.measurement.stop_reason;
  const auto fail = [&](std::string_view member, const std::string &problem) {
    throw InputError(fmt::format("{}: {}.{}: {}", source, entry.path, member, problem));
  };
  if (n > s.max_samples)
    fail("samples", fmt::format("{} samples, more than settings.maxSamples ({})", n, s.max_samples));
  if (reason == "max_samples" && n != s.max_samples)
    fail("stopReason",
         fmt::format("max_samples with {} samples; settings.maxSamples is {}", n, s.max_samples));
  if (reason == "noise_target" && n < s.min_samples)
    fail("stopReason",
         fmt::format("noise_target with {} samples, fewer than settings.minSamples ({})", n, s.min_samples));
}

} // namespace

ExternalResult read_external_result(const json::Value &document, const std::string &source) {
  const Field root(document, "$", source);
  const ObjectReader reader(root, {"format", "invocation", "harness", "workloadDigest", "environmentDigest",
                                   "oracle", "settings", "inputs", "implementations"});
  ExternalResult result;
  result.source = source;

  const Field format = reader.required("format");
  if (format.string() != kExternalSamplesFormat)
    format.fail(fmt::format("{:?} is not {:?}", format.string(), kExternalSamplesFormat));

  const Field invocation = reader.required("invocation");
  result.invocation = invocation.string();
  if (!is_invocation_time(result.invocation))
    invocation.fail(fmt::format("{:?} is not a UTC time YYYY-MM-DDTHH:MM:SS.mmmZ", result.invocation));

  const ObjectReader harness(reader.required("harness"), {"name", "version"});
  const Field harness_name = harness.required("name");
  result.harness_name = name_token(harness_name);
  // kibench's own protocol names harness "kibench": an external harness of
  // that name with kibench's version would take kibench run's protocol
  // digest, and its runs would join kibench's cohorts.
  if (result.harness_name == "kibench")
    harness_name.fail("\"kibench\" is kibench run's own harness; name the external harness");
  result.harness_version = nonempty_string(harness.required("version"), 100);

  result.workload_digest = read_digest(reader.required("workloadDigest"));
  result.environment_digest = read_digest(reader.required("environmentDigest"));
  result.oracle = name_token(reader.required("oracle"));
  result.settings = read_protocol_settings(reader.required("settings"));
  result.inputs = read_inputs(reader.required("inputs"));

  const Field list = reader.required("implementations");
  const std::size_t n = list.array().size();
  if (n == 0) list.fail("expected at least one implementation");
  for (std::size_t k = 0; k < n; ++k) {
    ImplementationEntry entry = read_implementation_entry(list.element(k));
    const auto same = std::find_if(result.implementations.begin(), result.implementations.end(),
                                   [&](const ImplementationEntry &e) { return e.name == entry.name; });
    if (same != result.implementations.end())
      throw InputError(fmt::format("{}: {}.name: {:?} is already the name of {}", source, entry.path,
                                   entry.name, same->path));
    entry.measurement.timer = result.settings.timer;
    check_stop_reason(entry, result.settings, source);
    result.implementations.push_back(std::move(entry));
  }
  return result;
}

ExternalResult read_external_result_file(const std::filesystem::path &file) {
  return read_external_result(json::parse_file(file, io::file_kinds::external_result), file.string());
}

} // namespace kibench::importers::external
