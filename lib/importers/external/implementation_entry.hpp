// One member of `implementations` in an external harness's result: what ran
// (a kibench implementation, or another project's code), its timed samples,
// its memory and its errors against the fp64 oracle.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/correctness/correctness.hpp"
#include "lib/harness/harness.hpp"
#include "lib/implementation/implementation.hpp"
#include "lib/workload/field_reader.hpp"

namespace kibench::importers::external {

struct ProjectRef {
  std::string name;
  std::string version;
};

struct CallableRef {
  std::string language; // as given; the revision stores it as an identifier
  std::string path;
  std::string symbol;
  std::string interface; // e.g. "torch.nn.Module"
};

// What describes an implementation kibench does not have: required unless
// the entry is a kibench implementation, whose revision comes from the run
// directory instead.
struct ExternalDescription {
  std::string title;
  std::string description;
  ProjectRef project;
  CallableRef callable;
  std::vector<std::pair<std::string, std::string>> software; // package -> version, in file order
};

struct ImplementationEntry {
  std::string path; // "$.implementations[1]", for messages about this entry
  std::string name;
  bool kibench_implementation = false;
  std::optional<ExternalDescription> description; // always set when !kibench_implementation
  // Samples with rounds, times and clocks as read; not yet flagged for
  // throttling (that needs the protocol's fraction).
  Measurement measurement;
  MemoryUse memory;
  std::optional<double> loss; // absent: the file says null (not finite)
  std::vector<ErrorStats> errors;
  std::vector<std::string> error_paths; // JSON path of errors[k].output, for messages
};

// Reads one entry; every problem is an InputError naming the file and path.
ImplementationEntry read_implementation_entry(const detail::Field &field);

} // namespace kibench::importers::external
