// kibench's command line as a function: the executable's main() and the C
// API's kibench_cli_run (the Python package's `python -m kibench`) run the
// same parsing, subcommands and exit codes.
#pragma once

#include <string>
#include <vector>

#include "kernels/plugin/plugin_catalog.hpp"

namespace kibench::cli {

struct CliContext {
  // Plugin descriptions the hosting program supplies (beside --plugin's
  // libraries): `run` and `list` offer their implementations.
  std::vector<plugin::InProcessPlugin> in_process;
  // The program and arguments that start a worker process for a plugin
  // implementation (`kibench worker`; the Python package gives its own);
  // empty: every plugin implementation runs in process.
  std::vector<std::string> worker_command;
  // The program that runs this command line again (`run --parallel-gpus`
  // starts one per GPU); empty where the host cannot (the C API).
  std::vector<std::string> self_command;
  // argv after the program's name, as given (filled in by run_cli).
  std::vector<std::string> arguments;
};

// Parses argv (argv[0] is the program's name), runs the subcommand and
// returns the exit code: 0 success, 1 a failed check, 2 bad input, 3 an
// internal or device error. Messages go to stderr, results to stdout.
int run_cli(int argc, const char *const *argv, const CliContext &context = {});

} // namespace kibench::cli
