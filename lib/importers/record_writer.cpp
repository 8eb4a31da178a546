#include "lib/importers/record_writer.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::importers {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path &path, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(errno)));
}

class FileDescriptor {
public:
  FileDescriptor(const fs::path &path, int flags, mode_t mode = 0) : fd_(::open(path.c_str(), flags, mode)) {
    if (fd_ < 0) fail(path, "cannot open");
  }
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  [[nodiscard]] int get() const { return fd_; }

private:
  int fd_;
};

// A new file, refusing to replace one.
void write_new_file(const fs::path &path, std::string_view contents) {
  const FileDescriptor file(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(file.get(), contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "write failed");
    written += static_cast<std::size_t>(n);
  }
}

} // namespace

RecordBatch::RecordBatch(fs::path root) : root_(std::move(root)) {}

RecordBatch::~RecordBatch() {
  if (committed_) return;
  // Undoes a batch that did not finish: the directories already placed
  // (they did not exist before, so nothing of anyone else's is touched),
  // the staging folder, and the root if this batch created it.
  std::error_code ignored;
  for (const fs::path &path : placed_) fs::remove_all(path, ignored);
  if (!staging_.empty()) fs::remove_all(staging_, ignored);
  if (!root_existed_) fs::remove(root_, ignored); // only if empty
}

void RecordBatch::start() {
  std::error_code error;
  if (fs::exists(root_, error) && !fs::is_directory(root_, error))
    throw InputError(fmt::format("{}: exists and is not a directory", root_.string()));
  root_existed_ = fs::exists(root_, error);
  fs::create_directories(root_);
  io::sweep_stale_staging(root_);
  std::string staging_template = (root_ / ".import-XXXXXX").string();
  if (::mkdtemp(staging_template.data()) == nullptr) fail(root_, "cannot create a staging directory");
  staging_ = staging_template;
  lock_ = std::make_unique<io::StagingLock>(staging_);
}

void RecordBatch::add(const RecordDirectory &record) {
  if (staging_.empty()) start();
  const fs::path target = root_ / record.name;
  std::error_code error;
  if (fs::exists(fs::symlink_status(target, error)))
    throw InputError(
        fmt::format("{}: already exists (an import never overwrites; remove it or choose another "
                    "--out)",
                    target.string()));
  const fs::path directory = staging_ / record.name;
  if (::mkdir(directory.c_str(), 0755) != 0) fail(directory, "cannot create");
  for (const auto &[file, manifest] : record.files)
    write_new_file(directory / file, json::pretty(manifest) + "\n");
  names_.push_back(record.name);
}

void RecordBatch::commit() {
  if (staging_.empty()) {
    committed_ = true; // nothing was added: nothing to write
    return;
  }
  {
    const FileDescriptor staged(staging_, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (::syncfs(staged.get()) != 0) fail(staging_, "cannot flush");
  }
  for (const std::string &name : names_) {
    const fs::path target = root_ / name;
    if (!io::rename_without_replacing(staging_ / name, target)) {
      errno = EEXIST;
      fail(target, "cannot move the record into place");
    }
    placed_.push_back(target);
  }
  {
    const FileDescriptor root_directory(root_, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (::fsync(root_directory.get()) != 0) fail(root_, "cannot flush");
  }
  committed_ = true;
  lock_.reset();
  std::error_code ignored;
  fs::remove_all(staging_, ignored); // only its lock file is left
}

} // namespace kibench::importers
