#include "lib/importers/external/external_revision.hpp"

#include <stdexcept>

#include "lib/manifest/envelope.hpp"

namespace kibench::importers::external {

json::Value external_revision(const ImplementationEntry &entry, const std::string &operation_digest) {
  if (!entry.description) throw std::logic_error("external_revision: entry has no description");
  const ExternalDescription &d = *entry.description;
  json::Object metadata{{"name", entry.name}, {"title", d.title}, {"description", d.description}};

  // The package versions belong to identity: the same Liger release under
  // another torch or triton is another revision, so they go into spec (as
  // KernelIndex's example does, build requirements), not into labels.
  json::Object install{{"kind", "package"}, {"package", d.project.name}, {"version", d.project.version}};
  json::Object variant{{"name", "installed"}, {"install", std::move(install)}};
  if (!d.software.empty()) {
    json::Object requirements;
    for (const auto &[package, version] : d.software) requirements.set(package, version);
    variant.set("requirements", std::move(requirements));
  }
  json::Object spec{
      {"projectRevision", json::Object{{"version", d.project.version}}},
      {"operation", json::Object{{"specDigest", operation_digest}}},
      {"callable", json::Object{{"language", d.callable.language},
                                {"path", d.callable.path},
                                {"symbol", d.callable.symbol},
                                {"interface", d.callable.interface}}},
      // The result says where the code ran, not what it supports: claim
      // nothing (as KernelIndex's curated Liger revisions do).
      {"support", json::Object{{"hardwareArchitectures", json::Array{}}, {"dtypes", json::Array{}}}},
      {"buildVariants", json::Array{std::move(variant)}},
      {"licensing", json::Object{}},
  };
  return make_manifest("ImplementationRevision", std::move(metadata), std::move(spec));
}

} // namespace kibench::importers::external
