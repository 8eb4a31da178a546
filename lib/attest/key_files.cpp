#include "lib/attest/key_files.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <fmt/core.h>

#include "lib/attest/base64.hpp"
#include "lib/attest/pem_keys.hpp"
#include "lib/error.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/io/input_file.hpp"
#include "lib/json/parse.hpp"

namespace kibench::attest {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view key_type = "ed25519";
constexpr mode_t secret_key_mode = 0600;
constexpr mode_t public_key_mode = 0644;
// A secret key file is about 160 bytes; anything much larger is not one.
constexpr std::size_t secret_key_file_capacity = 1024;

class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  [[nodiscard]] int get() const { return fd_; }
  // Closes now, reporting the error close() can carry (a failed write-back).
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

private:
  int fd_;
};

std::string system_error_text() {
  return std::strerror(errno);
}

// A new file beside `target` under a hidden temporary name, with `contents`
// written and flushed and exactly `mode` (set before any byte is written,
// whatever the umask). Removed again if anything fails.
class StagedKeyFile {
public:
  StagedKeyFile(const fs::path &target, std::string_view contents, mode_t mode) {
    const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string temporary = (directory / ("." + target.filename().string() + ".XXXXXX")).string();
    FileDescriptor fd(::mkostemp(temporary.data(), O_CLOEXEC));
    if (fd.get() < 0)
      throw InputError(fmt::format("{}: cannot create: {}", target.string(), system_error_text()));
    path_ = temporary;
    bool ok = ::fchmod(fd.get(), mode) == 0;
    std::size_t written = 0;
    while (ok && written < contents.size()) {
      const ssize_t n = ::write(fd.get(), contents.data() + written, contents.size() - written);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) written += static_cast<std::size_t>(n);
    }
    ok = ok && ::fsync(fd.get()) == 0;
    // Closed even after a failure; errno still tells the first one (a
    // successful close leaves it alone).
    ok = fd.close() && ok;
    if (!ok) {
      const std::string why = system_error_text();
      ::unlink(path_.c_str());
      throw InputError(fmt::format("{}: cannot write: {}", target.string(), why));
    }
  }
  ~StagedKeyFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  StagedKeyFile(const StagedKeyFile &) = delete;
  StagedKeyFile &operator=(const StagedKeyFile &) = delete;

  [[nodiscard]] const fs::path &path() const { return path_; }
  // The file is in place (renamed away): nothing left to remove.
  void placed() { path_.clear(); }

private:
  fs::path path_;
};

[[noreturn]] void already_exists(const fs::path &path) {
  throw InputError(
      fmt::format("{}: already exists; not overwriting it (--force replaces the key pair)", path.string()));
}

// A key file may be replaced only where a regular file (or nothing) is:
// renaming over anything else fails or is not what was meant.
void require_replaceable(const fs::path &path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw InputError(fmt::format("{}: cannot replace it: not a regular file", path.string()));
}

void sync_directory_of(const fs::path &path) {
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return; // best effort: some filesystems refuse directory fds
  ::fsync(fd);
  ::close(fd);
}

// Fixed capacity, so reading the text never reallocates and leaves a copy.
using SecretKeyText = SecretBuffer<secret_key_file_capacity>;

// The members of a secret key file; views into its (wiped) text.
struct SecretKeyFields {
  std::optional<std::string_view> type;
  std::optional<std::string_view> keyid;
  std::optional<std::string_view> seed;
};

[[noreturn]] void malformed_line(const fs::path &path, std::size_t line_number, std::string_view problem) {
  throw InputError(fmt::format("{}: line {}: {}", path.string(), line_number, problem));
}

SecretKeyFields split_secret_key_file(std::string_view text, const fs::path &path) {
  SecretKeyFields fields;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;

    const std::size_t colon = line.find(": ");
    if (colon == std::string_view::npos) malformed_line(path, line_number, "expected \"name: value\"");
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 2);
    std::optional<std::string_view> *slot = name == "type"    ? &fields.type
                                            : name == "keyid" ? &fields.keyid
                                            : name == "seed"  ? &fields.seed
                                                              : nullptr;
    // Never echo the line: it may be the seed.
    if (slot == nullptr) malformed_line(path, line_number, "unknown field (expected type, keyid and seed)");
    if (slot->has_value()) malformed_line(path, line_number, "field appears twice");
    *slot = value;
  }
  const auto require = [&](const std::optional<std::string_view> &field, std::string_view name) {
    if (!field)
      throw InputError(fmt::format("{}: no \"{}\" line: not a kibench secret key file", path.string(), name));
  };
  require(fields.type, "type");
  require(fields.keyid, "keyid");
  require(fields.seed, "seed");
  return fields;
}

void read_owner_only_file(const fs::path &path, SecretKeyText &text) {
  // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of
  // waiting for a writer.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) throw InputError(fmt::format("{}: cannot read: {}", path.string(), system_error_text()));
  // Checked on the open descriptor, so the file checked is the file read.
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) {
    throw InputError(fmt::format("{}: cannot read: {}", path.string(), system_error_text()));
  }
  if (!S_ISREG(status.st_mode)) throw InputError(fmt::format("{}: not a regular file", path.string()));
  const mode_t permissions = status.st_mode & 07777;
  if ((permissions & 077) != 0) {
    throw InputError(
        fmt::format("{}: permissions {:04o} are too open: a secret key must be accessible to its "
                    "owner only (chmod 600 {})",
                    path.string(), permissions, path.string()));
  }
  while (true) {
    const auto unused = text.unused();
    if (unused.empty()) {
      throw InputError(fmt::format("{}: larger than {} bytes: not a kibench secret key file", path.string(),
                                   text.capacity()));
    }
    const ssize_t n = ::read(fd.get(), unused.data(), unused.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("{}: cannot read: {}", path.string(), system_error_text()));
    if (n == 0) break;
    text.resize(text.size() + static_cast<std::size_t>(n));
  }
}

std::string string_member(const json::Value &document, std::string_view key, const fs::path &path) {
  const json::Value *member = document.find(key);
  if (member == nullptr || !member->is_string()) {
    throw InputError(fmt::format("{}: $.{}: expected a string", path.string(), key));
  }
  return member->as_string();
}

void require_matching_keyid(std::string_view recorded, const PublicKey &key, const fs::path &path) {
  if (recorded != key.keyid()) {
    throw InputError(
        fmt::format("{}: keyid {} does not match the key it holds (keyid {}): the file is damaged",
                    path.string(), recorded, key.keyid()));
  }
}

} // namespace

KeyPairPaths key_pair_paths(const fs::path &prefix) {
  // Appended, not replace_extension(): "keys/ci.v2" must give "keys/ci.v2.key".
  return {fs::path(prefix.string() + ".key"), fs::path(prefix.string() + ".pub")};
}

void write_key_pair(const SecretKey &key, const KeyPairPaths &paths, bool replace) {
  // Checked up front so that nothing is written when the pair cannot be
  // placed; the renames below still never replace a file that appeared in
  // between unless `replace`.
  for (const auto &path : {paths.secret_key, paths.public_key}) {
    std::error_code ignored;
    // symlink_status: a dangling link is in the way too.
    if (!replace && fs::exists(fs::symlink_status(path, ignored))) already_exists(path);
    if (replace) require_replaceable(path);
  }

  // 1. Both new files, whole and flushed, before anything old is touched.
  std::optional<StagedKeyFile> secret;
  {
    PrivateKeyPem text;
    compose_private_key_pem(key, text);
    secret.emplace(paths.secret_key, text.text(), secret_key_mode);
  }
  StagedKeyFile public_file(paths.public_key, public_key_pem(key.public_key()), public_key_mode);

  // 2. Renamed into place, the public key first: should the secret key's
  // rename then fail, the old public key is put back, and the old pair
  // stands as it was.
  const auto place = [replace](StagedKeyFile &file, const fs::path &target) {
    bool placed = false;
    try {
      placed = replace ? ::rename(file.path().c_str(), target.c_str()) == 0
                       : io::rename_without_replacing(file.path(), target);
    } catch (const std::runtime_error &e) {
      throw InputError(e.what());
    }
    if (!placed && !replace) already_exists(target);
    if (!placed)
      throw InputError(fmt::format("{}: cannot replace: {}", target.string(), system_error_text()));
    file.placed();
  };
  std::string old_public_key;
  std::error_code ignored;
  if (replace && fs::is_regular_file(fs::symlink_status(paths.public_key, ignored)))
    old_public_key = io::read_file(paths.public_key, io::file_kinds::public_key);
  place(public_file, paths.public_key);
  try {
    place(*secret, paths.secret_key);
  } catch (...) {
    if (!replace) {
      ::unlink(paths.public_key.c_str()); // new, and useless without its secret half
    } else if (!old_public_key.empty()) {
      StagedKeyFile restore(paths.public_key, old_public_key, public_key_mode);
      if (::rename(restore.path().c_str(), paths.public_key.c_str()) == 0) restore.placed();
    }
    throw;
  }
  sync_directory_of(paths.secret_key);
}

PublicKey read_public_key(const fs::path &path) {
  const std::string text = io::read_file(path, io::file_kinds::public_key);
  if (looks_like_pem(text)) return parse_public_key_pem(text, path);
  // The JSON file of earlier kibench versions.
  const json::Value document = json::parse(text, path.string());
  if (!document.is_object())
    throw InputError(fmt::format("{}: not a kibench public key file", path.string()));
  const std::string type = string_member(document, "type", path);
  if (type != key_type) {
    throw InputError(
        fmt::format("{}: $.type: \"{}\" is not supported (expected \"{}\")", path.string(), type, key_type));
  }
  PublicKey key;
  const std::string encoded = string_member(document, "publicKey", path);
  if (decode_base64_into(encoded, key.bytes) != key.bytes.size()) {
    throw InputError(
        fmt::format("{}: $.publicKey: expected the base64 of {} bytes", path.string(), key.bytes.size()));
  }
  require_matching_keyid(string_member(document, "keyid", path), key, path);
  return key;
}

SecretKey read_secret_key(const fs::path &path) {
  SecretKeyText text;
  read_owner_only_file(path, text);
  if (looks_like_pem(text.text())) return parse_private_key_pem(text.text(), path);
  // The line-based file of earlier kibench versions.
  const SecretKeyFields fields = split_secret_key_file(text.text(), path);
  if (*fields.type != key_type) {
    throw InputError(fmt::format("{}: type \"{}\" is not supported (expected \"{}\")", path.string(),
                                 *fields.type, key_type));
  }
  SecretBuffer<ed25519_seed_size> seed;
  if (decode_base64_into(*fields.seed, std::span(seed.data(), seed.capacity())) != seed.capacity()) {
    throw InputError(
        fmt::format("{}: seed: expected the base64 of {} bytes", path.string(), seed.capacity()));
  }
  SecretKey key(std::span<const unsigned char, ed25519_seed_size>(seed.data(), ed25519_seed_size));
  require_matching_keyid(*fields.keyid, key.public_key(), path);
  return key;
}

} // namespace kibench::attest
