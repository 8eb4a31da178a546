// Runs the kibench binary as a user would, capturing exit code and output.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace kibench::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `arguments` is appended to the binary path verbatim (quote paths yourself).
inline ProcessResult run_command(const std::string &command_line) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kibench-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  const std::string command =
      command_line + " >" + (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  const int status = std::system(command.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(dir / "out");
  r.err = read_text(dir / "err");
  std::filesystem::remove_all(dir);
  return r;
}

inline ProcessResult run_kibench(const std::string &arguments) {
  return run_command(std::string("'") + KIBENCH_BINARY + "' " + arguments);
}

// A fresh empty directory under the system temp folder, removed on scope exit.
class TempDir {
public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("kibench-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  [[nodiscard]] const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

inline std::string quoted(const std::filesystem::path &p) {
  return "'" + p.string() + "'";
}

} // namespace kibench::test
