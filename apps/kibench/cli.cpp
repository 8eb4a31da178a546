#include "apps/kibench/cli.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"

namespace kibench::cli {

namespace {

// errno of the first failed flush of stdout (0: none).
int stdout_error = 0;

// What a command printed must have reached standard output: a full disk,
// /dev/full or a closed descriptor is an error (exit 3) with its reason,
// never a silent exit 0 with the table or CSV lost.
int checked_stdout(int code) {
  const bool flushed = flush_stdout();
  if (flushed && !std::ferror(stdout) && stdout_error == 0) return code;
  const int error = stdout_error;
  stdout_error = 0;
  std::clearerr(stdout);
  fmt::print(stderr, "kibench: error: standard output: cannot write: {}\n",
             error != 0 ? std::strerror(error) : "write error");
  return code == 0 || code == 1 ? 3 : code;
}

int run_action(const Action &action) {
  try {
    return action ? action() : 0;
  } catch (const InputError &e) {
    // Messages quote inputs (a file name, a field's value): escaped, so the
    // one line stays one line and no escape sequence reaches the terminal.
    fmt::print(stderr, "kibench: {}\n", io::printable(e.what()));
    return 2;
  } catch (const CheckFailed &e) {
    fmt::print(stderr, "kibench: {}\n", io::printable(e.what()));
    return 1;
  } catch (const std::exception &e) {
    fmt::print(stderr, "kibench: error: {}\n", io::printable(e.what()));
    return 3;
  }
}

} // namespace

bool flush_stdout() {
  errno = 0;
  if (std::fflush(stdout) == 0) return true;
  if (stdout_error == 0) stdout_error = errno;
  return false;
}

int run_cli(int argc, const char *const *argv, const CliContext &context) {
  CLI::App app{"kibench: benchmark LLM-training loss kernels and record the results as "
               "verifiable KernelIndex manifests."};
  app.set_version_flag("--version", "kibench " KIBENCH_VERSION);
  app.require_subcommand(1);
  app.footer("Run `kibench SUBCOMMAND --help` for a subcommand's flags and examples.");

  CliContext with_arguments = context;
  with_arguments.arguments.assign(argv + (argc > 0 ? 1 : 0), argv + argc);
  Action action;
  add_run(app, action, with_arguments);
  add_list(app, action, context);
  add_env(app, action);
  add_digest(app, action);
  add_compare(app, action);
  add_import(app, action);
  add_export(app, action);
  add_report(app, action);
  add_keygen(app, action);
  add_attest(app, action);
  add_verify(app, action);
  add_merge(app, action);
  add_reproduce(app, action, context);
  add_worker(app, action, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return checked_stdout(code == 0 ? 0 : 2);
  }
  return checked_stdout(run_action(action));
}

} // namespace kibench::cli
