#include "lib/io/atomic_write.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

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

} // namespace

void write_file_atomically(const fs::path &path, std::string_view contents) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string temp = hidden_sibling(dir, path.filename().string(), ".XXXXXX");
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, "cannot create a temporary file");
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ::unlink(temp.c_str());
      fail(path, "write failed");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail(path, "cannot flush");
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    fail(path, "cannot rename into place");
  }
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
  lock_->remove_file();
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
  lock_.reset();
  fsync_directory(final_.has_parent_path() ? final_.parent_path() : fs::path("."));
}

} // namespace kibench::io
