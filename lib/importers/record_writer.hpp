// Writes imported records, one directory each, all or none, as they are
// made: each record goes into one hidden staging folder under the output
// root (".import-XXXXXX", under an io::StagingLock) the moment it is added,
// so memory never holds more than one; commit() renames them into place
// whole, never over an existing directory. Without commit() (an error, a
// --strict refusal) everything the batch wrote is removed again, and the
// root too if the batch created it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/io/staging_lock.hpp"
#include "lib/json/value.hpp"

namespace kibench::importers {

struct RecordDirectory {
  std::string name;                                       // directory name under the output root
  std::vector<std::pair<std::string, json::Value>> files; // file name -> JSON, written readable
};

class RecordBatch {
public:
  // Nothing is created before the first add().
  explicit RecordBatch(std::filesystem::path root);
  ~RecordBatch();
  RecordBatch(const RecordBatch &) = delete;
  RecordBatch &operator=(const RecordBatch &) = delete;

  // Writes `record` into the staging folder. InputError (and, once the
  // batch is destroyed, nothing written) when the root is not a directory
  // or root/<name> exists: an import never overwrites or merges.
  // std::runtime_error on an I/O failure.
  void add(const RecordDirectory &record);

  // Flushes the staged files (one syncfs for the batch, not an fsync per
  // file) and renames every record into place.
  void commit();

  [[nodiscard]] std::size_t size() const { return names_.size(); }

private:
  void start();

  std::filesystem::path root_;
  bool root_existed_ = true;
  std::filesystem::path staging_;
  std::unique_ptr<io::StagingLock> lock_;
  std::vector<std::string> names_;
  std::vector<std::filesystem::path> placed_;
  bool committed_ = false;
};

} // namespace kibench::importers
