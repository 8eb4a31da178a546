#include "lib/manifest/implementation_manifest.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "lib/error.hpp"
#include "lib/io/text_rules.hpp"
#include "lib/manifest/envelope.hpp"

namespace kibench {

namespace {

void require(bool ok, const RevisionFacts &facts, std::string_view field, std::string_view rule) {
  if (!ok)
    throw InputError(fmt::format("implementation \"{}\": {} {}",
                                 facts.name.empty() ? "?" : io::excerpt(facts.name), field, rule));
}

// Identifiers kibench writes as keys (labels, requirements) are bounded
// here, where they enter: KernelIndex states no length for them.
constexpr std::size_t kMaxKeyChars = 100;

// KernelIndex normalizes set-like lists (sorted, no duplicates) before it
// hashes; writing them that way keeps the file and the identity alike.
json::Array sorted_set(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  json::Array out;
  for (auto &item : items) out.push_back(std::move(item));
  return out;
}


void check(const RevisionFacts &f) {
  require(io::is_lowercase_name(f.name) && f.name.size() <= 200, f, "metadata.name",
          "must match [a-z0-9][a-z0-9._-]* (at most 200 characters)");
  require(f.title.size() <= 200, f, "metadata.title", "must be at most 200 characters");
  require(f.description.size() <= 2000, f, "metadata.description", "must be at most 2000 characters");
  for (const auto &[key, value] : f.labels) {
    require(io::is_identifier(key) && key.size() <= kMaxKeyChars, f,
            fmt::format("metadata.labels key \"{}\"", io::excerpt(key)),
            "must match [a-z][a-z0-9_]* (at most 100 characters)");
    require(value.size() <= 200, f, fmt::format("metadata.labels.{}", key), "must be at most 200 characters");
  }
  require(io::is_sha256_digest(f.operation_digest), f, "spec.operation.specDigest",
          "must be sha256:<64 hex>");
  require(io::is_identifier(f.language), f, "spec.callable.language", "must match [a-z][a-z0-9_]*");
  require(f.interface.empty() || io::is_identifier(f.interface), f, "spec.callable.interface",
          "must match [a-z][a-z0-9_]*");
  require(f.source_path.size() <= 500, f, "spec.callable.path", "must be at most 500 characters");
  require(f.symbol.size() <= 200, f, "spec.callable.symbol", "must be at most 200 characters");
  for (const auto &a : f.architectures)
    require(io::is_identifier(a), f, "spec.support.hardwareArchitectures",
            "entries must match [a-z][a-z0-9_]*");
  for (const auto &d : f.dtypes)
    require(io::is_identifier(d), f, "spec.support.dtypes", "entries must match [a-z][a-z0-9_]*");
  require(!f.source.version.empty() && f.source.version.size() <= 100, f, "spec.projectRevision.version",
          "must be 1 to 100 characters");
  require(f.source.commit.empty() || io::is_lowercase_hex(f.source.commit, 40), f,
          "spec.projectRevision.commit", "must be 40 lowercase hex digits");
  require(f.source.tree_digest.empty() || io::is_sha256_digest(f.source.tree_digest), f,
          "spec.projectRevision.treeDigest", "must be sha256:<64 hex>");
  require(f.licence.size() <= 200, f, "spec.licensing.declared", "must be at most 200 characters");
  if (f.package) {
    require(!f.package->name.empty() && f.package->name.size() <= 200, f, "package name",
            "must be 1 to 200 characters");
    require(f.package->version.size() <= 100, f, "package version", "must be at most 100 characters");
    for (const auto &[package, version] : f.package->requirements) {
      require(io::is_identifier(package) && package.size() <= kMaxKeyChars, f,
              fmt::format("spec.buildVariants[0].requirements key \"{}\"", io::excerpt(package)),
              "must match [a-z][a-z0-9_]* (e.g. liger_kernel; at most 100 characters)");
      require(version.size() <= 200, f, fmt::format("spec.buildVariants[0].requirements.{}", package),
              "must be at most 200 characters");
    }
  }
  if (f.source_file) {
    require(io::is_sha256_digest(f.source_file->content_digest), f, "spec.source.contentDigest",
            "must be sha256:<64 hex>");
    require(f.source_file->file_name.size() <= 200, f, "spec.source.fileName",
            "must be at most 200 characters");
    require(f.source_file->size_bytes > 0, f, "spec.source.sizeBytes", "must be above 0");
  }
}

} // namespace

json::Value implementation_manifest(const RevisionFacts &f) {
  check(f);
  json::Object metadata{{"name", f.name}};
  if (!f.title.empty()) metadata.set("title", f.title);
  if (!f.description.empty()) metadata.set("description", f.description);
  if (!f.labels.empty()) {
    json::Object labels;
    for (const auto &[key, value] : f.labels) labels.set(key, value);
    metadata.set("labels", std::move(labels));
  }

  json::Object project{{"version", f.source.version}};
  if (!f.source.repository.empty()) project.set("repository", f.source.repository);
  if (!f.source.commit.empty()) project.set("commit", f.source.commit);
  if (!f.source.tree_digest.empty()) project.set("treeDigest", f.source.tree_digest);

  json::Object callable{{"language", f.language}};
  if (!f.source_path.empty()) callable.set("path", f.source_path);
  if (!f.symbol.empty()) callable.set("symbol", f.symbol);
  if (!f.interface.empty()) callable.set("interface", f.interface);

  json::Object support{{"hardwareArchitectures", sorted_set(f.architectures)},
                       {"dtypes", sorted_set(f.dtypes)}};
  if (!f.layouts.empty()) support.set("layouts", sorted_set(f.layouts));

  json::Object licensing;
  if (!f.licence.empty()) licensing.set("declared", f.licence);

  json::Object spec{{"projectRevision", std::move(project)},
                    {"operation", json::Object{{"specDigest", f.operation_digest}}},
                    {"callable", std::move(callable)},
                    {"support", std::move(support)}};
  if (f.package) {
    json::Object install{{"kind", "package"}, {"package", f.package->name}, {"version", f.package->version}};
    json::Object variant{{"name", "installed"}, {"install", std::move(install)}};
    if (!f.package->requirements.empty()) {
      json::Object requirements;
      for (const auto &[package, version] : f.package->requirements) requirements.set(package, version);
      variant.set("requirements", std::move(requirements));
    }
    spec.set("buildVariants", json::Array{std::move(variant)});
  }
  if (f.source_file) {
    json::Object source{{"contentDigest", f.source_file->content_digest}};
    if (!f.source_file->file_name.empty()) source.set("fileName", f.source_file->file_name);
    source.set("sizeBytes", f.source_file->size_bytes);
    spec.set("source", std::move(source));
  }
  spec.set("licensing", std::move(licensing));
  return make_manifest("ImplementationRevision", std::move(metadata), std::move(spec));
}

} // namespace kibench
