// Files appear whole or not at all: write to a temporary in the same folder,
// fsync, then rename over the target. A run directory is staged the same way
// (written under a hidden name, renamed when complete).
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "lib/io/staging_lock.hpp"

namespace kibench::io {

// Only a regular file, or a path where nothing is yet, is replaced: a
// device (/dev/null, /dev/full), a FIFO, a socket, a folder or a symlink at
// `path` is an InputError (exit 2), checked before the temporary is made.
// As root, renaming over /dev/null would replace the system's device.
void write_file_atomically(const std::filesystem::path &path, std::string_view contents);

// Removes the temporaries ".<name>.XXXXXX" beside `path` that writers of
// it killed before their rename left behind (each is flock'ed while its
// writer lives); write_file_atomically calls it first. Never throws.
std::vector<std::filesystem::path> sweep_stale_temporaries(const std::filesystem::path &path);

// The same rule for a file a command is about to write (`--out FILE`),
// checked before any work: InputError "<flag> <path>: is a <kind>, ...".
void require_replaceable_file(const std::filesystem::path &path, std::string_view flag);

// rename(2) that never replaces an existing `to` (renameat2 with
// RENAME_NOREPLACE; a check first where the filesystem lacks it). False
// when `to` exists; std::runtime_error on any other failure.
bool rename_without_replacing(const std::filesystem::path &from, const std::filesystem::path &to);

// A directory that becomes visible at `final_path` only when commit() is
// called; destroyed with its contents otherwise (on an exception). It is
// staged as the hidden ".<name>.partial-XXXXXX" beside `final_path`, under
// a StagingLock; creating one first sweeps the stale staging directories
// of killed writers from the same parent (staging_lock.hpp).
class StagedDirectory {
public:
  // What commit() does when `final_path` exists by then (another run of the
  // same millisecond took the name): take "<name>-2", "<name>-3", ...
  // instead, or fail.
  enum class IfTaken { add_suffix, fail };

  explicit StagedDirectory(std::filesystem::path final_path, IfTaken if_taken = IfTaken::add_suffix);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory &) = delete;
  StagedDirectory &operator=(const StagedDirectory &) = delete;

  [[nodiscard]] const std::filesystem::path &staging_path() const { return staging_; }
  // Where the directory is (after commit()) or is meant to be.
  [[nodiscard]] const std::filesystem::path &final_path() const { return final_; }
  void write(std::string_view relative_name, std::string_view contents);
  void commit();

private:
  std::filesystem::path final_;
  IfTaken if_taken_;
  std::filesystem::path staging_;
  std::unique_ptr<StagingLock> lock_;
  bool committed_ = false;
};

} // namespace kibench::io
