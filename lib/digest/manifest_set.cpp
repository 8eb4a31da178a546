#include "lib/digest/manifest_set.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/core.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/parse.hpp"

namespace kibench {
namespace {

ManifestEntry make_entry(const json::Value &manifest, const std::filesystem::path &file, std::string label,
                         ManifestOrigin origin) {
  ManifestEntry entry;
  try {
    entry.digest = manifest_digest(manifest);
  } catch (const InputError &e) {
    throw InputError(fmt::format("{}: {}", label, e.what()));
  }
  entry.label = std::move(label);
  entry.file = file;
  entry.kind = manifest.find("kind")->as_string();
  if (const json::Value *metadata = manifest.find("metadata")) {
    if (const json::Value *name = metadata->find("name"); name != nullptr && name->is_string()) {
      entry.name = name->as_string();
    }
  }
  entry.origin = origin;
  entry.manifest = manifest;
  return entry;
}

std::string display_path(const std::filesystem::path &path) {
  return path.lexically_normal().string();
}

} // namespace

bool is_manifest(const json::Value &value) {
  const json::Value *api_version = value.find("apiVersion");
  const json::Value *kind = value.find("kind");
  return api_version != nullptr && api_version->is_string() && kind != nullptr && kind->is_string();
}

std::vector<ManifestEntry> manifests_in(const json::Value &document, const std::filesystem::path &file,
                                        const std::string &label, ManifestOrigin origin) {
  std::vector<ManifestEntry> out;
  if (is_manifest(document)) {
    out.push_back(make_entry(document, file, label, origin));
  } else if (document.is_array() && !document.as_array().empty()) {
    const json::Array &items = document.as_array();
    if (!std::all_of(items.begin(), items.end(), is_manifest)) return {};
    for (std::size_t i = 0; i < items.size(); ++i) {
      out.push_back(make_entry(items[i], file, fmt::format("{}#{}", label, i), origin));
    }
  } else if (document.is_object() && !document.as_object().empty()) {
    const json::Object &members = document.as_object();
    if (!std::all_of(members.begin(), members.end(), [](const auto &m) { return is_manifest(m.second); })) {
      return {};
    }
    for (const auto &[key, manifest] : members) {
      out.push_back(make_entry(manifest, file, fmt::format("{}#{}", label, key), origin));
    }
  }
  return out;
}

bool ManifestSet::first_visit(const std::filesystem::path &file) {
  std::error_code ignored;
  std::filesystem::path identity = std::filesystem::weakly_canonical(file, ignored);
  if (identity.empty()) identity = std::filesystem::absolute(file).lexically_normal();
  return visited_.insert(identity).second;
}

void ManifestSet::add_entries(std::vector<ManifestEntry> entries) {
  for (auto &entry : entries) entries_.push_back(std::move(entry));
}

void ManifestSet::add_file(const std::filesystem::path &file) {
  if (!first_visit(file)) return;
  const std::string label = display_path(file);
  auto entries = manifests_in(json::parse_file(file), file, label, ManifestOrigin::named);
  if (entries.empty()) {
    throw InputError(fmt::format("{}: not a manifest: no \"apiVersion\" and \"kind\" (nor an array or object "
                                 "of manifests)",
                                 label));
  }
  add_entries(std::move(entries));
}

void ManifestSet::add_directory(const std::filesystem::path &directory) {
  for (const auto &file : json_files_in(directory)) {
    if (!first_visit(file)) continue;
    add_entries(
        manifests_in(json::parse_file(file), file, display_path(file), ManifestOrigin::run_directory));
  }
}

void ManifestSet::add_run_folder(const std::filesystem::path &directory) {
  const std::size_t before = entries_.size();
  add_directory(directory);
  if (entries_.size() > before) return;
  std::vector<std::filesystem::path> children;
  for (const auto &item : std::filesystem::directory_iterator(directory)) {
    if (item.is_directory() && !item.path().filename().string().starts_with('.'))
      children.push_back(item.path());
  }
  std::sort(children.begin(), children.end());
  for (const auto &child : children) add_directory(child);
}

void ManifestSet::add_beside(const std::filesystem::path &file) {
  const std::filesystem::path directory = file.has_parent_path() ? file.parent_path() : ".";
  for (const auto &neighbour : json_files_in(directory)) {
    // Beside "seed.json" in the working directory, label "protocol.json",
    // not "./protocol.json".
    const std::filesystem::path shown = file.has_parent_path() ? neighbour : neighbour.filename();
    if (!first_visit(neighbour)) continue;
    try {
      add_entries(
          manifests_in(json::parse_file(neighbour), shown, display_path(shown), ManifestOrigin::beside));
    } catch (const InputError &e) {
      skipped_.push_back(e.what());
    }
  }
}

std::vector<const ManifestEntry *> ManifestSet::of_kind(std::string_view kind) const {
  std::vector<const ManifestEntry *> out;
  for (const auto &entry : entries_) {
    if (entry.kind == kind) out.push_back(&entry);
  }
  return out;
}

std::vector<std::filesystem::path> json_files_in(const std::filesystem::path &directory) {
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) throw InputError(fmt::format("{}: cannot read: {}", directory.string(), error.message()));
  std::vector<std::filesystem::path> files;
  for (const auto &item : it) {
    if (item.path().extension() == ".json" && item.is_regular_file()) files.push_back(item.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace kibench
