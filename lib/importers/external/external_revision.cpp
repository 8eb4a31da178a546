#include "lib/importers/external/external_revision.hpp"

#include <stdexcept>

#include "lib/manifest/implementation_manifest.hpp"

namespace kibench::importers::external {

json::Value external_revision(const ImplementationEntry &entry, const std::string &operation_digest) {
  if (!entry.description) throw std::logic_error("external_revision: entry has no description");
  const ExternalDescription &d = *entry.description;
  RevisionFacts facts;
  facts.name = entry.name;
  facts.title = d.title;
  facts.description = d.description;
  facts.operation_digest = operation_digest;
  facts.language = d.callable.language;
  facts.source_path = d.callable.path;
  facts.symbol = d.callable.symbol;
  facts.interface = d.callable.interface;
  facts.source.version = d.project.version;
  // The package versions belong to identity: the same Liger release under
  // another torch or triton is another revision, so they go into spec (as
  // KernelIndex's example does, build requirements), not into labels.
  facts.package = PackageFacts{.name = d.project.name, .version = d.project.version, .requirements = {}};
  for (const auto &[package, version] : d.software) facts.package->requirements[package] = version;
  // The result says where the code ran, not what it supports: claim
  // nothing (as KernelIndex's curated Liger revisions do).
  return implementation_manifest(facts);
}

} // namespace kibench::importers::external
