#include "lib/io/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

namespace kibench::io {

namespace {

std::string_view file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something else";
}

} // namespace

UnreadableFile::UnreadableFile(const std::filesystem::path &path, std::string reason)
    : InputError(fmt::format("{}: cannot read: {}", path.string(), reason)), reason_(std::move(reason)) {}

std::string byte_count(std::uint64_t bytes) {
  using namespace file_kinds;
  if (bytes >= kGiB && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} bytes", bytes);
}

InputFile::InputFile(const std::filesystem::path &path, const FileKind &kind) : path_(path), kind_(kind) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  // It changes nothing for a regular file, the only kind read.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) throw UnreadableFile(path, std::strerror(errno));
  struct stat status {};
  if (::fstat(fd_, &status) != 0) {
    const int error = errno;
    ::close(fd_);
    throw UnreadableFile(path, std::strerror(error));
  }
  if (!S_ISREG(status.st_mode)) {
    ::close(fd_);
    throw UnreadableFile(path, fmt::format("{}, not a regular file", file_type_name(status.st_mode)));
  }
  size_hint_ = static_cast<std::uint64_t>(status.st_size);
  if (size_hint_ > kind_.max_bytes) {
    ::close(fd_);
    throw UnreadableFile(path, fmt::format("{}, larger than a {} may be ({})", byte_count(size_hint_),
                                           kind_.name, byte_count(kind_.max_bytes)));
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t InputFile::read(char *buffer, std::size_t capacity) {
  while (true) {
    const ssize_t n = ::read(fd_, buffer, capacity);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UnreadableFile(path_, std::strerror(errno));
    consumed_ += static_cast<std::uint64_t>(n);
    if (consumed_ > kind_.max_bytes)
      throw UnreadableFile(path_, fmt::format("it grew past the {} a {} may be while it was read",
                                              byte_count(kind_.max_bytes), kind_.name));
    return static_cast<std::size_t>(n);
  }
}

std::string InputFile::read_all() {
  std::string text;
  // One more byte than the file had when opened, so that the usual case
  // ends with a single short read.
  text.reserve(static_cast<std::size_t>(size_hint_) + 1);
  char buffer[1 << 16];
  while (const std::size_t n = read(buffer, sizeof buffer)) text.append(buffer, n);
  return text;
}

std::string read_file(const std::filesystem::path &path, const FileKind &kind) {
  return InputFile(path, kind).read_all();
}

} // namespace kibench::io
