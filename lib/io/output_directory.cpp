#include "lib/io/output_directory.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include <fmt/core.h>

#include "lib/error.hpp"
#include "lib/io/staging_lock.hpp"

namespace kibench::io {

namespace fs = std::filesystem;

namespace {

// The folders create_directories(path) is about to create, deepest first.
std::vector<fs::path> missing_folders(const fs::path &path) {
  std::vector<fs::path> missing;
  std::error_code error;
  for (fs::path p = fs::absolute(path, error).lexically_normal(); !p.empty() && p != p.root_path();
       p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, error))) break;
    missing.push_back(p);
  }
  return missing;
}

// Creates (if missing) and probes one folder; the folders it created go to
// `created`, deepest first.
void prepare(const OutputFolder &folder, std::vector<fs::path> &created) {
  const fs::path &directory = folder.path;
  const auto refuse = [&](std::string_view why) {
    return InputError(fmt::format("{} {}: {}", folder.flag, directory.string(), why));
  };
  std::error_code error;
  const fs::file_status link = fs::symlink_status(directory, error);
  const fs::file_status target = fs::status(directory, error);
  if (fs::is_symlink(link) && !fs::exists(target))
    throw refuse("a dangling link (a symbolic link to nothing); name a folder");
  if (fs::exists(target) && !fs::is_directory(target)) throw refuse("exists and is not a folder");
  if (!fs::exists(target)) {
    const std::vector<fs::path> missing = missing_folders(directory);
    fs::create_directories(directory, error);
    if (error) throw refuse(fmt::format("cannot create the folder: {}", error.message()));
    created.insert(created.begin(), missing.begin(), missing.end());
  }

  // Permissions alone do not tell (a read-only mount, a full disk, ACLs):
  // create a file, write a byte to it, remove it.
  std::string probe = (directory / ".kibench-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw refuse(fmt::format("cannot write in it: {}", std::strerror(errno)));
  const bool written = ::write(fd, "\n", 1) == 1;
  const int write_error = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!written) throw refuse(fmt::format("cannot write in it: {}", std::strerror(write_error)));

  sweep_stale_staging(directory);
}

} // namespace

void prepare_output_directories(const std::vector<OutputFolder> &folders) {
  std::vector<fs::path> created; // deepest first
  try {
    for (const OutputFolder &folder : folders) prepare(folder, created);
  } catch (...) {
    // Only empty folders go: remove() refuses any other.
    std::error_code ignored;
    for (const fs::path &folder : created) fs::remove(folder, ignored);
    throw;
  }
}

} // namespace kibench::io
