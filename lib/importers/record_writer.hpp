// Writes imported records, one directory each, all or none: every target is
// checked before the first is written, the records are staged in a hidden
// folder beside them and renamed into place whole, never over an existing
// directory, and if anything fails the directories already placed are
// removed again.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::importers {

struct RecordDirectory {
  std::string name;                                       // directory name under the output root
  std::vector<std::pair<std::string, json::Value>> files; // file name -> JSON, written readable
};

// Throws InputError (nothing written) when a record's directory already
// exists under `root`: an import never overwrites or merges.
void check_targets_free(const std::filesystem::path &root, const std::vector<RecordDirectory> &records);

// Writes every record under `root` (created if missing). On failure nothing
// this call wrote remains, and the error propagates. Throws InputError when a
// target exists (check_targets_free), std::runtime_error on an I/O failure.
void write_record_directories(const std::filesystem::path &root, const std::vector<RecordDirectory> &records);

} // namespace kibench::importers
