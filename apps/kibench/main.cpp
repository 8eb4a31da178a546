// The kibench executable: the command line of apps/kibench/cli.hpp.
#include <filesystem>
#include <system_error>

#include "apps/kibench/cli.hpp"

int main(int argc, char **argv) {
  kibench::cli::CliContext context;
  // Its workers are this same executable's `kibench worker`.
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    context.worker_command = {self.string(), "worker"};
    context.self_command = {self.string()};
  }
  return kibench::cli::run_cli(argc, argv, context);
}
