#include "lib/io/atomic_write.hpp"

#include <cerrno>
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

StagedDirectory::StagedDirectory(fs::path final_path) : final_(std::move(final_path)) {
  if (fs::exists(final_)) {
    errno = EEXIST;
    fail(final_, "output directory already exists");
  }
  const fs::path parent = final_.has_parent_path() ? final_.parent_path() : fs::path(".");
  fs::create_directories(parent);
  std::string temp = hidden_sibling(parent, final_.filename().string(), ".partial-XXXXXX");
  if (::mkdtemp(temp.data()) == nullptr) fail(final_, "cannot create a staging directory");
  staging_ = temp;
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
  if (::rename(staging_.c_str(), final_.c_str()) != 0)
    fail(final_, "cannot move the run directory into place");
  committed_ = true;
  fsync_directory(final_.has_parent_path() ? final_.parent_path() : fs::path("."));
}

} // namespace kibench::io
