#include "lib/io/atomic_write.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "lib/error.hpp"

namespace kibench::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path &path, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(errno)));
}

void fsync_directory(const fs::path &dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return; // best effort: some filesystems refuse directory fds
  ::fsync(fd);
  ::close(fd);
}

// "<dir>/.<name><suffix>" (built with append: GCC 12 misreports
// operator+ chains here under -Wrestrict).
std::string hidden_sibling(const fs::path &dir, const std::string &name, std::string_view suffix) {
  std::string file(".");
  file.append(name).append(suffix);
  return (dir / file).string();
}

// What is at `path` when it is something a file write may not replace.
std::optional<std::string_view> unreplaceable_kind(const fs::path &path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  switch (status.type()) {
  case fs::file_type::not_found:
  case fs::file_type::regular:
    return std::nullopt;
  case fs::file_type::directory:
    return "a folder";
  case fs::file_type::symlink:
    return "a symbolic link";
  case fs::file_type::character:
    return "a character device";
  case fs::file_type::block:
    return "a block device";
  case fs::file_type::fifo:
    return "a FIFO";
  case fs::file_type::socket:
    return "a socket";
  default:
    return error ? "unreadable" : "not a regular file";
  }
}

} // namespace

void require_replaceable_file(const fs::path &path, std::string_view flag) {
  if (const auto kind = unreplaceable_kind(path))
    throw InputError(fmt::format("{}{}{}: is {}; only a regular file or a new path is replaced (name a file "
                                 "to write)",
                                 flag, flag.empty() ? "" : " ", path.string(), *kind));
}

std::vector<fs::path> sweep_stale_temporaries(const fs::path &path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string prefix = "." + path.filename().string() + ".";
  std::vector<fs::path> candidates;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() == prefix.size() + 6 && name.starts_with(prefix) &&
        std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }))
      candidates.push_back(it->path());
  }
  std::vector<fs::path> removed;
  for (const fs::path &candidate : candidates) {
    const int fd = ::open(candidate.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat status {};
    // Ours, a regular file, and its writer's lock free: the writer is gone.
    if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_uid == ::geteuid() &&
        status.st_nlink > 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::unlink(candidate.c_str()) == 0)
      removed.push_back(candidate);
    ::close(fd);
  }
  return removed;
}

void write_file_atomically(const fs::path &path, std::string_view contents) {
  require_replaceable_file(path, "");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  sweep_stale_temporaries(path);
  // The temporary is flock'ed from creation to rename, so that a sweeper
  // (another write of the same file) removes only the temporaries of
  // writers that are gone. One a sweeper unlinked between mkstemp and the
  // lock has no links left: take another.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = hidden_sibling(dir, path.filename().string(), ".XXXXXX");
    fd = ::mkstemp(temp.data());
    if (fd < 0) fail(path, "cannot create a temporary file");
    struct stat status {};
    if (::flock(fd, LOCK_EX) == 0 && ::fstat(fd, &status) == 0 && status.st_nlink > 0) break;
    ::close(fd);
    fd = -1;
    if (attempt == 100) {
      errno = EAGAIN;
      fail(path, "cannot create a temporary file");
    }
  }
  const auto give_up = [&](std::string_view what) {
    const int error = errno;
    ::unlink(temp.c_str());
    ::close(fd);
    errno = error;
    fail(path, what);
  };
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("write failed");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) give_up("cannot flush");
  if (::rename(temp.c_str(), path.c_str()) != 0) give_up("cannot rename into place");
  ::close(fd); // the lock ends once the file has its name
  fsync_directory(dir);
}

bool rename_without_replacing(const fs::path &from, const fs::path &to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS) fail(to, "cannot rename into place");
  // Filesystems without RENAME_NOREPLACE: check, then rename (which would
  // replace an empty directory that appeared in between).
  std::error_code error;
  if (fs::exists(fs::symlink_status(to, error))) return false;
  if (::rename(from.c_str(), to.c_str()) == 0) return true;
  if (errno == EEXIST || errno == ENOTEMPTY) return false;
  fail(to, "cannot rename into place");
}

StagedDirectory::StagedDirectory(fs::path final_path, IfTaken if_taken)
    : final_(std::move(final_path)), if_taken_(if_taken) {
  if (if_taken_ == IfTaken::fail && fs::exists(final_)) {
    errno = EEXIST;
    fail(final_, "output directory already exists");
  }
  const fs::path parent = final_.has_parent_path() ? final_.parent_path() : fs::path(".");
  fs::create_directories(parent);
  sweep_stale_staging(parent);
  std::string temp = hidden_sibling(parent, final_.filename().string(), ".partial-XXXXXX");
  if (::mkdtemp(temp.data()) == nullptr) fail(final_, "cannot create a staging directory");
  staging_ = temp;
  try {
    lock_ = std::make_unique<StagingLock>(staging_);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging_, ignored);
    throw;
  }
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(staging_, ignored);
  }
}

void StagedDirectory::write(std::string_view relative_name, std::string_view contents) {
  write_file_atomically(staging_ / relative_name, contents);
}

void StagedDirectory::commit() {
  ::chmod(staging_.c_str(), 0755);
  // The lock file stays inside until the directory has its name: killed
  // before the rename, the staging directory is still one a later run
  // sweeps (without the lock file it would be left forever); killed after
  // it, the run directory is complete and holds a stray hidden lock file.
  // Two runs into one --out in the same millisecond want the same name; the
  // second takes a numbered one rather than losing its measurements.
  constexpr int kMaxSuffix = 1000;
  const fs::path wanted = final_;
  for (int suffix = 2;; ++suffix) {
    if (rename_without_replacing(staging_, final_)) break;
    if (if_taken_ == IfTaken::fail || suffix > kMaxSuffix) {
      errno = EEXIST;
      fail(final_, "cannot move the directory into place");
    }
    final_ = wanted;
    final_ += fmt::format("-{}", suffix);
  }
  committed_ = true;
  lock_->moved_to(final_);
  lock_->remove_file();
  lock_.reset();
  fsync_directory(final_.has_parent_path() ? final_.parent_path() : fs::path("."));
}

} // namespace kibench::io
