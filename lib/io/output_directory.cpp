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

void prepare_output_directory(const fs::path &directory, std::string_view flag) {
  const auto refuse = [&](std::string_view why) {
    return InputError(fmt::format("{} {}: {}", flag, directory.string(), why));
  };
  std::error_code error;
  const fs::file_status link = fs::symlink_status(directory, error);
  const fs::file_status target = fs::status(directory, error);
  if (fs::is_symlink(link) && !fs::exists(target))
    throw refuse("a symbolic link to nothing (a dangling link); name a folder");
  if (fs::exists(target) && !fs::is_directory(target)) throw refuse("exists and is not a folder");
  if (!fs::exists(target)) {
    fs::create_directories(directory, error);
    if (error) throw refuse(fmt::format("cannot create the folder: {}", error.message()));
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

} // namespace kibench::io
