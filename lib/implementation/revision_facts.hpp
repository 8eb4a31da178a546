// What an implementation says about itself: plain facts, no format. One
// place turns them into a KernelIndex ImplementationRevision
// (lib/manifest/implementation_manifest.hpp), so implementations never
// build manifests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kibench {

// Where the code came from. Everything here is identity: two builds of
// different sources are different revisions.
struct SourceRevision {
  std::string version;     // e.g. "0.1.0"; required
  std::string repository;  // a URL, or empty
  std::string commit;      // 40 lowercase hex digits, or empty when unknown
  std::string tree_digest; // "sha256:…" of the source the code was built from, or empty
};

// An installed package the code is (a Python library, say), with the
// versions of what it runs on: another torch under the same package
// version is another revision.
struct PackageFacts {
  std::string name;
  std::string version;
  std::map<std::string, std::string> requirements; // package → version
};

// The one file the code ships as (a plugin library, a Python module): its
// sha256 identifies what ran even where no version or commit says so.
struct SourceFile {
  std::string content_digest; // "sha256:…" of the file's bytes
  std::string file_name;      // its base name
  std::uint64_t size_bytes = 0;
};

struct RevisionFacts {
  std::string name;        // metadata.name: [a-z0-9][a-z0-9._-]*, e.g. "kibench-fused"
  std::string title;       // metadata.title
  std::string description; // metadata.description
  // metadata.labels: what a reader needs that is not identity (e.g. a
  // budget also stated in the description, or whether the tree was dirty).
  std::map<std::string, std::string> labels;

  std::string operation_digest; // the OperationSpec it implements ("sha256:…")
  std::string language;         // callable.language: "cpp", "cuda", "python", "c", ...
  std::string source_path;      // callable.path, relative to its repository
  std::string symbol;           // callable.symbol
  std::string interface;        // callable.interface, e.g. "kibench_implementation"

  std::vector<std::string> architectures; // support.hardwareArchitectures, e.g. "sm_90a", "x86_64"
  std::vector<std::string> dtypes;        // support.dtypes
  std::vector<std::string> layouts;       // support.layouts

  SourceRevision source;
  std::optional<PackageFacts> package;
  std::optional<SourceFile> source_file; // spec.source
  std::string licence; // licensing.declared (an SPDX expression), or empty when none is declared
};

} // namespace kibench
