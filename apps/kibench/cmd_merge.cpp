// `kibench merge`: the shards of one sharded run joined into one folder
// (lib/merge/merge.hpp does the checking and the writing).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/kibench/commands.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/merge/merge.hpp"

namespace kibench::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> shards;
  std::string out;
};

int merge_command(const MergeArgs &args) {
  std::vector<std::filesystem::path> paths(args.shards.begin(), args.shards.end());
  std::error_code ec;
  if (std::filesystem::symlink_status(args.out, ec).type() != std::filesystem::file_type::not_found)
    throw InputError(fmt::format("--out {}: already exists; merge writes a new folder", io::printable(args.out)));
  const merge::MergePlan plan = merge::plan_merge(paths);
  fmt::print("run set {}: {} points; shards seen: {}\n", plan.run_set_digest,
             plan.points.size() + plan.missing.size() + plan.doubled.size(), fmt::join(plan.shards, ", "));
  for (const std::string &line : plan.missing) fmt::print("missing  {}\n", io::printable(line));
  for (const std::string &line : plan.doubled) fmt::print("doubled  {}\n", io::printable(line));
  if (!plan.complete())
    throw CheckFailed(fmt::format("merge: {} point{} missing and {} doubled: nothing written", plan.missing.size(),
                                  plan.missing.size() == 1 ? "" : "s", plan.doubled.size()));
  merge::write_merge(plan, args.out);
  fmt::print("written: {} ({} run directories and the run set)\n", io::printable(args.out), plan.points.size());
  return 0;
}

} // namespace

void add_merge(CLI::App &app, Action &action) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App *command = app.add_subcommand(
      "merge", "Join the shards of one sharded run (kibench run --shard K/N) into one folder, checking that "
               "they are one run and that every point is there once");
  command->add_option("SHARD", args->shards, "A shard's --out folder, or one of its run directories")->required();
  command->add_option("--out", args->out, "The merged folder (must not exist)")->required();
  command->footer(R"(The shards must share one run set (the file run-set.*.json each writes beside its run
directories): the same points in the same order, implementations, settings and kibench.
The merged folder holds every point's run directory, copied, and the run set; compare,
report, export and digest --verify read it as the whole run.

Examples:
  kibench merge shard-0/ shard-1/ shard-2/ --out merged/
  kibench merge runs/ --out merged/     # every shard wrote into one shared folder

Exit codes: 0 merged; 1 points missing or doubled (listed; nothing written);
2 unreadable input, shards of different runs (the difference named), or --out exists.)");
  command->callback([args, &action] { action = [args] { return merge_command(*args); }; });
}

} // namespace kibench::cli
