#include <cstdio>
#include <exception>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"

int main(int argc, char **argv) {
  CLI::App app{"kibench: benchmark LLM-training loss kernels and record the results as "
               "verifiable KernelIndex manifests."};
  app.set_version_flag("--version", "kibench " KIBENCH_VERSION);
  app.require_subcommand(1);
  app.footer("Run `kibench SUBCOMMAND --help` for a subcommand's flags and examples.");

  kibench::cli::Action action;
  kibench::cli::add_run(app, action);
  kibench::cli::add_list(app, action);
  kibench::cli::add_env(app, action);
  kibench::cli::add_digest(app, action);
  kibench::cli::add_compare(app, action);
  kibench::cli::add_import(app, action);
  kibench::cli::add_report(app, action);
  kibench::cli::add_keygen(app, action);
  kibench::cli::add_attest(app, action);
  kibench::cli::add_verify(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return action ? action() : 0;
  } catch (const kibench::InputError &e) {
    // Messages quote inputs (a file name, a field's value): escaped, so the
    // one line stays one line and no escape sequence reaches the terminal.
    fmt::print(stderr, "kibench: {}\n", kibench::io::printable(e.what()));
    return 2;
  } catch (const kibench::CheckFailed &e) {
    fmt::print(stderr, "kibench: {}\n", kibench::io::printable(e.what()));
    return 1;
  } catch (const std::exception &e) {
    fmt::print(stderr, "kibench: error: {}\n", kibench::io::printable(e.what()));
    return 3;
  }
}
