// Writes imported records, one directory each, all or none: every target is
// checked before the first is written, each directory is staged and renamed
// into place whole, and if any write fails the directories already placed
// are removed again.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "json/value.hpp"

namespace kibench::importers {

struct RecordDirectory {
  std::string name;                                       // directory name under the output root
  std::vector<std::pair<std::string, json::Value>> files; // file name -> JSON, written readable
};

// Throws InputError (nothing written) when a record's directory already
// exists under `root`: an import never overwrites or merges.
void check_targets_free(const std::filesystem::path &root, const std::vector<RecordDirectory> &records);

// Writes every record under `root` (created if missing). On failure nothing
// this call wrote remains, and the error propagates.
void write_record_directories(const std::filesystem::path &root, const std::vector<RecordDirectory> &records);

} // namespace kibench::importers
