// Files appear whole or not at all: write to a temporary in the same folder,
// fsync, then rename over the target. A run directory is staged the same way
// (written under a hidden name, renamed when complete).
#pragma once

#include <filesystem>
#include <string_view>

namespace kibench::io {

void write_file_atomically(const std::filesystem::path &path, std::string_view contents);

// A directory that becomes visible at `final_path` only when commit() is
// called; destroyed with its contents otherwise (on an exception).
class StagedDirectory {
public:
  explicit StagedDirectory(std::filesystem::path final_path);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory &) = delete;
  StagedDirectory &operator=(const StagedDirectory &) = delete;

  [[nodiscard]] const std::filesystem::path &staging_path() const { return staging_; }
  [[nodiscard]] const std::filesystem::path &final_path() const { return final_; }
  void write(std::string_view relative_name, std::string_view contents);
  void commit();

private:
  std::filesystem::path final_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

} // namespace kibench::io
