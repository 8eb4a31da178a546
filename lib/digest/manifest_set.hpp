// The manifests `kibench digest` reads: a file holds one manifest, an array
// of them, or an object whose members are all manifests (a KernelIndex
// record page's {run, protocol, environment}); a directory holds a run's
// manifest files beside files that are not manifests (raw samples).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench {

// How a manifest came to be read, which decides how strictly it is checked.
enum class ManifestOrigin {
  named,         // a file named on the command line
  run_directory, // a file of a directory named on the command line: a whole run
  beside,        // a file next to a named file, read only to check references
};

struct ManifestEntry {
  std::string label;          // "run.fused.json", "seed.json#run", "batch.json#2"
  std::filesystem::path file; // the file it was read from (relative URIs start here)
  std::string kind;
  std::string name; // metadata.name; empty when absent
  std::string digest;
  ManifestOrigin origin = ManifestOrigin::named;
  json::Value manifest;
};

// An object with string "apiVersion" and "kind".
bool is_manifest(const json::Value &value);

// The manifests one parsed document holds, labelled after `label` (the
// whole document), `label#index` (arrays) or `label#key` (objects of
// manifests). Empty when the document is none of these shapes.
// Throws InputError (naming the entry) when a manifest lacks its spec.
std::vector<ManifestEntry> manifests_in(const json::Value &document, const std::filesystem::path &file,
                                        const std::string &label, ManifestOrigin origin);

class ManifestSet {
public:
  // A file named on the command line: InputError when it is unreadable, not
  // JSON, or holds no manifest.
  void add_file(const std::filesystem::path &file);

  // Every *.json manifest in a directory (a run directory). Files that are
  // JSON but not manifests (raw samples) are skipped; bad JSON is InputError.
  void add_directory(const std::filesystem::path &directory);

  // A run directory, or a folder of them (runs/, as compare, report and
  // export read it): when `directory` holds no manifest itself, each of its
  // subfolders whose name does not start with "." is read as one.
  void add_run_folder(const std::filesystem::path &directory);

  // The *.json manifests beside `file` not read yet, for checking its
  // references. Files beside it that are not valid JSON manifests are
  // skipped and listed in skipped().
  void add_beside(const std::filesystem::path &file);

  [[nodiscard]] const std::vector<ManifestEntry> &entries() const { return entries_; }
  [[nodiscard]] std::vector<const ManifestEntry *> of_kind(std::string_view kind) const;
  // "<file>: <why>" for each file add_beside passed over.
  [[nodiscard]] const std::vector<std::string> &skipped() const { return skipped_; }

private:
  // False when the file was read before (named twice, or named and beside).
  bool first_visit(const std::filesystem::path &file);
  void add_entries(std::vector<ManifestEntry> entries);

  std::vector<ManifestEntry> entries_;
  std::vector<std::string> skipped_;
  std::set<std::filesystem::path> visited_;
};

// The regular *.json files of a directory, sorted by name.
std::vector<std::filesystem::path> json_files_in(const std::filesystem::path &directory);

} // namespace kibench
