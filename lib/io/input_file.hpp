// Reading a file named by a user or found in a run directory: only a regular
// file is opened (a FIFO would block, /dev/zero never ends), and never more
// than the size cap of its kind, so no input can hang kibench or exhaust its
// memory. docs/guide.md lists the caps. Every error is an UnreadableFile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "lib/error.hpp"

namespace kibench::io {

// "<path>: cannot read: <reason>", the reason also on its own ("No such file
// or directory", "a FIFO, not a regular file", "9 MiB, larger than a
// workload may be (4 MiB)") for messages that name the file their own way.
class UnreadableFile : public InputError {
public:
  UnreadableFile(const std::filesystem::path &path, std::string reason);
  [[nodiscard]] const std::string &reason() const { return reason_; }

private:
  std::string reason_;
};

// A kind of input file and the most bytes one may hold.
struct FileKind {
  std::string_view name; // "workload", "manifest", ... (in messages)
  std::uint64_t max_bytes;
};

namespace file_kinds {

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr std::uint64_t kGiB = 1024 * kMiB;

// A WorkloadCase or OperationSpec (a few kB).
inline constexpr FileKind workload{"workload", 4 * kMiB};
// A manifest or another JSON file of a run directory: raw samples (about
// 135 bytes a sample; --max-samples is at most 100000), summary.json, the
// attestation envelope.
inline constexpr FileKind manifest{"manifest", 64 * kMiB};
// `import external`'s result: every implementation's samples.
inline constexpr FileKind external_result{"external samples result", 64 * kMiB};
// One of KernelIndex's curated Liger manifests (--curated).
inline constexpr FileKind curated_manifest{"curated manifest", 4 * kMiB};
// Liger-Kernel's benchmark CSV, read as a stream (its records one at a time).
inline constexpr FileKind liger_csv{"Liger benchmark CSV", 2 * kGiB};
// keygen's PREFIX.pub (about 150 bytes).
inline constexpr FileKind public_key{"public key", 64 * kKiB};

} // namespace file_kinds

// An open regular file, read at most kind.max_bytes in all. Opening never
// blocks: the file is opened non-blocking and refused unless it is regular.
class InputFile {
public:
  InputFile(const std::filesystem::path &path, const FileKind &kind);
  ~InputFile();
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;

  // Up to `capacity` bytes; 0 at the end of the file. UnreadableFile once
  // the file has given more than the cap (it grew after it was opened).
  std::size_t read(char *buffer, std::size_t capacity);
  // The rest of the file.
  std::string read_all();

  [[nodiscard]] const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
  FileKind kind_;
  int fd_ = -1;
  std::uint64_t size_hint_ = 0;
  std::uint64_t consumed_ = 0;
};

// The whole of a regular file of `kind`.
std::string read_file(const std::filesystem::path &path, const FileKind &kind);

// "1.5 MiB", "64 KiB", "300 bytes": a byte count for messages.
std::string byte_count(std::uint64_t bytes);

} // namespace kibench::io
