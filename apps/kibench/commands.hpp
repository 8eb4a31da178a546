// Each subcommand registers its flags and, when chosen, the action to run.
// Actions return the process exit code; main() maps exceptions to codes:
// InputError -> 2, CheckFailed -> 1, anything else -> 3.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "apps/kibench/cli.hpp"

namespace kibench::cli {

using Action = std::function<int()>;

// fflush(stdout) that keeps the reason of the first failure, for the exit
// status run_cli reports (3, "standard output: cannot write: <reason>").
// False when the flush failed.
bool flush_stdout();

// run and list also take the plugins the hosting program hands in.
void add_run(CLI::App &app, Action &action, const CliContext &context);
void add_digest(CLI::App &app, Action &action);
void add_list(CLI::App &app, Action &action, const CliContext &context);
void add_env(CLI::App &app, Action &action);
void add_compare(CLI::App &app, Action &action);
void add_import(CLI::App &app, Action &action);
void add_export(CLI::App &app, Action &action);
void add_report(CLI::App &app, Action &action);
void add_keygen(CLI::App &app, Action &action);
void add_attest(CLI::App &app, Action &action);
void add_verify(CLI::App &app, Action &action);
void add_merge(CLI::App &app, Action &action);
// reproduce, like run, takes the hosting program's plugins (the Python lanes).
void add_reproduce(CLI::App &app, Action &action, const CliContext &context);
// The hidden `worker` subcommand (kernels/plugin/worker_server.hpp).
void add_worker(CLI::App &app, Action &action, const CliContext &context);

} // namespace kibench::cli
