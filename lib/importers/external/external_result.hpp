// The result file of an external harness (format
// "kibench.dev/external-samples/v1", docs/import.md): samples of several
// implementations timed by another program with kibench's measurement
// method, each checked against the fp64 oracle outputs of a `kibench run`.
// Reading and validating only; nothing here looks at the run directory.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lib/harness/protocol_settings.hpp"
#include "lib/importers/external/implementation_entry.hpp"
#include "lib/json/value.hpp"

namespace kibench::importers::external {

inline constexpr std::string_view kExternalSamplesFormat = "kibench.dev/external-samples/v1";

struct InputFile {
  std::string path;   // "$.inputs[0]", for messages about this entry
  std::string tensor; // a tensor of the workload
  std::string file;
  std::string sha256; // "sha256:<64 hex>" (a bare 64-hex value is accepted and prefixed)
};

struct ExternalResult {
  std::string source;     // the file as named, for messages
  std::string invocation; // RFC 3339 UTC with milliseconds: the raw samples' invocation id
  std::string harness_name, harness_version;
  std::string workload_digest, environment_digest;
  std::string oracle;
  ProtocolSettings settings;
  std::vector<InputFile> inputs;
  std::vector<ImplementationEntry> implementations;
};

// Every problem is an InputError "<source>: <json path>: <problem>". What
// depends on the workload (its tensors, the outputs a check compares) is
// checked by the import, once the run directory is read.
ExternalResult read_external_result(const json::Value &document, const std::string &source);
ExternalResult read_external_result_file(const std::filesystem::path &file);

} // namespace kibench::importers::external
