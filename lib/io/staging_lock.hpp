// Who owns a staging directory. kibench writes a run directory (or a batch
// of imported records) under a hidden name and renames it into place when
// complete; a process killed in between leaves the hidden directory behind.
// The writer holds an exclusive flock(2) on a lock file inside it for as
// long as it writes, and the kernel drops that lock when the process ends,
// however it ends. So a staging directory whose lock can be taken has no
// live writer, and a later kibench may remove it; one without the lock file
// is not kibench's to judge and is left alone.
#pragma once

#include <filesystem>
#include <vector>

namespace kibench::io {

class StagingLock {
public:
  // Creates the lock file inside `staging_dir` (which must be new and this
  // process's), already locked: it is written under a temporary name,
  // locked, then renamed, so no sweeper ever sees it unlocked.
  explicit StagingLock(const std::filesystem::path &staging_dir);
  ~StagingLock();
  StagingLock(const StagingLock &) = delete;
  StagingLock &operator=(const StagingLock &) = delete;

  // The staging directory was renamed to `directory` (the lock file with
  // it, still locked).
  void moved_to(const std::filesystem::path &directory);

  // Removes the lock file (still locked), once the directory is in place.
  // A directory without the lock file is never swept.
  void remove_file();

private:
  std::filesystem::path file_;
  int fd_ = -1;
};

// The name of the lock file inside a staging directory.
inline constexpr const char *kStagingLockName = ".kibench-writer.lock";

// True for a name kibench stages under: ".<name>.partial-XXXXXX" (a run
// directory, --save-tensors) or ".import-XXXXXX" (a batch of imported
// records).
bool is_staging_name(const std::string &name);

// Removes the staging directories in `parent` that kibench left behind:
// those with a staging name, owned by this user, holding the lock file, and
// whose lock nobody holds. Returns what it removed. Never throws: a
// directory it cannot judge or remove stays.
std::vector<std::filesystem::path> sweep_stale_staging(const std::filesystem::path &parent);

} // namespace kibench::io
