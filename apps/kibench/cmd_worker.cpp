// `kibench worker`: the process a plugin implementation runs in when kibench
// isolates it (kibench run --isolation; kernels/plugin/worker_server.hpp).
// kibench starts it with its socket on descriptor 3; it is not for users,
// and says so when started by hand.
#include <memory>

#include "apps/kibench/commands.hpp"
#include "kernels/plugin/worker_server.hpp"
#include "lib/error.hpp"

namespace kibench::cli {

namespace {

struct WorkerArgs {
  std::string lane;
  std::vector<std::string> plugins;
  std::string pass = "full";
  double timeout_s = 60.0;
};

} // namespace

void add_worker(CLI::App &app, Action &action, const CliContext &context) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App *worker = app.add_subcommand("worker", "The process kibench runs an isolated implementation in");
  worker->group(""); // not listed: kibench starts it
  worker->add_option("--lane", args->lane)->required();
  worker->add_option("--plugin", args->plugins);
  worker->add_option("--pass", args->pass);
  worker->add_option("--timeout", args->timeout_s);
  worker->callback([args, &action, &context] {
    action = [args, &context] {
      plugin::WorkerOptions options;
      options.lane = args->lane;
      options.libraries = args->plugins;
      const auto pass = pass_from_string(args->pass);
      if (!pass) throw InputError("kibench worker: --pass: not forward, backward or full");
      options.settings.pass = *pass;
      options.settings.timeout_s = args->timeout_s;
      return plugin::serve_worker(options, context.in_process);
    };
  });
}

} // namespace kibench::cli
