#include "lib/io/staging_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

namespace kibench::io {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path &path, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(errno)));
}

bool ends_with_mkdtemp_suffix(const std::string &name, std::size_t at) {
  // mkdtemp replaces "XXXXXX" with six letters or digits.
  if (name.size() != at + 6) return false;
  for (std::size_t i = at; i < name.size(); ++i) {
    const char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// Removes `directory` if its lock file can be locked; true when removed.
bool remove_if_abandoned(const fs::path &directory) {
  struct stat status {};
  if (::lstat(directory.c_str(), &status) != 0 || !S_ISDIR(status.st_mode) || status.st_uid != ::geteuid())
    return false;
  const fs::path lock = directory / kStagingLockName;
  const int fd = ::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false; // no lock file: not ours to judge
  bool removed = false;
  struct stat lock_status {};
  if (::fstat(fd, &lock_status) == 0 && S_ISREG(lock_status.st_mode) && lock_status.st_uid == ::geteuid() &&
      ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    // Held while removing, so two sweepers never both decide.
    std::error_code error;
    fs::remove_all(directory, error);
    removed = !error;
  }
  ::close(fd);
  return removed;
}

} // namespace

StagingLock::StagingLock(const fs::path &staging_dir) : file_(staging_dir / kStagingLockName) {
  std::string temporary = (staging_dir / ".kibench-writer.XXXXXX").string();
  fd_ = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd_ < 0) fail(staging_dir, "cannot create a lock file");
  const std::string owner = fmt::format("kibench writer, pid {}\n", ::getpid());
  const bool ok = ::flock(fd_, LOCK_EX | LOCK_NB) == 0 &&
                  ::write(fd_, owner.data(), owner.size()) == static_cast<ssize_t>(owner.size()) &&
                  ::rename(temporary.c_str(), file_.c_str()) == 0;
  if (!ok) {
    const int error = errno;
    ::unlink(temporary.c_str());
    ::close(fd_);
    errno = error;
    fail(staging_dir, "cannot lock");
  }
}

StagingLock::~StagingLock() {
  if (fd_ >= 0) ::close(fd_);
}

void StagingLock::moved_to(const fs::path &directory) {
  file_ = directory / kStagingLockName;
}

void StagingLock::remove_file() {
  ::unlink(file_.c_str());
}

bool is_staging_name(const std::string &name) {
  if (name.starts_with(".import-"))
    return ends_with_mkdtemp_suffix(name, std::string_view(".import-").size());
  constexpr std::string_view partial = ".partial-";
  if (!name.starts_with('.') || name.size() < partial.size() + 6) return false;
  const std::size_t at = name.size() - 6 - partial.size();
  return name.compare(at, partial.size(), partial) == 0 &&
         ends_with_mkdtemp_suffix(name, at + partial.size());
}

std::vector<fs::path> sweep_stale_staging(const fs::path &parent) {
  std::vector<fs::path> candidates;
  std::error_code error;
  for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
    if (is_staging_name(it->path().filename().string())) candidates.push_back(it->path());
  }
  std::vector<fs::path> removed;
  for (const fs::path &candidate : candidates) {
    if (remove_if_abandoned(candidate)) removed.push_back(candidate);
  }
  return removed;
}

} // namespace kibench::io
