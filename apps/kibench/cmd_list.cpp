// kibench list: workloads, implementations, and what this machine can run.
#include <algorithm>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "apps/kibench/plugins.hpp"
#include "lib/error.hpp"
#include "lib/run/backend.hpp"
#include "lib/workload/workload.hpp"

namespace kibench::cli {

namespace {

struct ListArgs {
  std::string workloads;
  std::vector<std::string> plugins;
};

int list_command(const ListArgs &args, const CliContext &context) {
  const std::string &dir_arg = args.workloads;
  const auto backend = make_backend(plugin_catalog(args.plugins, context, {}));
  const auto gpu_missing = backend->gpu_unavailable_reason();
  const auto environment = backend->environment();
  fmt::print("machine: {}{}\n\n", environment.product,
             gpu_missing ? fmt::format(" (no GPU: {})", *gpu_missing) : std::string());
  fmt::print("implementations:\n");
  const auto implementations = backend->implementations();
  std::size_t width = 14;
  for (const auto &e : implementations) width = std::max(width, e.name.size());
  for (const auto &e : implementations) {
    const bool can = !(e.needs_gpu && gpu_missing);
    fmt::print("  {:<{}} {:<5} {:<10} {}\n", e.name, width, e.needs_gpu ? "GPU" : "CPU",
               can ? "runs here" : "needs GPU",
               e.summary + (e.is_oracle ? " [oracle]" : "") + (e.is_diagnostic ? " [diagnostic]" : ""));
  }
  const std::filesystem::path dir =
      dir_arg.empty() ? default_workloads_dir() : std::filesystem::path(dir_arg);
  fmt::print("\nworkloads in {}:\n", dir.string());
  for (const auto &file : list_workload_files(dir)) {
    try {
      const Workload w = load_workload(file);
      fmt::print("  {:<64} T={:<6} V={:<7} H={:<5} β={} τ={}\n",
                 std::filesystem::relative(file, dir).string(), w.tokens, w.vocab, w.hidden, w.scalars.beta,
                 w.scalars.temperature);
    } catch (const InputError &e) {
      fmt::print("  {:<64} INVALID: {}\n", std::filesystem::relative(file, dir).string(), e.what());
    }
  }
  return 0;
}

} // namespace

void add_list(CLI::App &app, Action &action, const CliContext &context) {
  auto args = std::make_shared<ListArgs>();
  CLI::App *list =
      app.add_subcommand("list", "List workloads, implementations and what this machine can run");
  list->add_option("--workloads", args->workloads,
                   "Workloads folder (default: $KIBENCH_WORKLOADS, else ./workloads, else kibench's own in "
                   "share/kibench beside the binary or in its install prefix)");
  list->add_option("--plugin", args->plugins,
                   "A plugin library whose implementations to list too; repeatable");
  list->footer("Examples:\n  kibench list\n  kibench list --workloads workloads/small\n"
               "  kibench list --plugin build/examples/plugin/libkibench_example_plugin.so");
  list->callback(
      [args, &action, &context] { action = [args, &context] { return list_command(*args, context); }; });
}

} // namespace kibench::cli
