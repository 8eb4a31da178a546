// `kibench digest`: print the identity digests of manifests, or verify that
// every digest a run references matches the manifests and files it names.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/kibench/commands.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/digest/verify.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/canonical.hpp"

namespace kibench::cli {
namespace {

struct DigestOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool verify = false;
};

ManifestSet load_named(const std::vector<std::string> &paths, bool with_neighbours) {
  ManifestSet set;
  for (const auto &path : paths) {
    if (std::filesystem::is_directory(path)) {
      set.add_run_folder(path);
    } else {
      set.add_file(path);
    }
  }
  // Neighbours come after every named path so that a file named on the
  // command line is never demoted to one merely found beside another.
  if (with_neighbours) {
    for (const auto &path : paths) {
      if (!std::filesystem::is_directory(path)) set.add_beside(path);
    }
  }
  return set;
}

int print_digests(const DigestOptions &options) {
  const ManifestSet set = load_named(options.paths, false);
  for (const auto &entry : set.entries()) {
    if (options.json) {
      const json::Value line = json::Object{
          {"file", entry.label},
          {"kind", entry.kind},
          {"name", entry.name.empty() ? json::Value(nullptr) : json::Value(entry.name)},
          {"digest", entry.digest},
      };
      fmt::print("{}\n", json::canonical(line));
    } else {
      fmt::print("{}  {}\n", entry.digest, io::printable(entry.label));
    }
  }
  return 0;
}

int verify_manifests(const DigestOptions &options) {
  const ManifestSet set = load_named(options.paths, true);
  for (const auto &skipped : set.skipped()) fmt::print("note  skipped {}\n", io::printable(skipped));
  for (const auto &entry : set.entries()) {
    if (entry.origin == ManifestOrigin::beside)
      fmt::print("found beside it  {}\n", io::printable(entry.label));
  }
  const VerifyReport report = verify(set);
  // A CI step that verified nothing must not pass.
  if (report.manifests.empty())
    throw InputError("nothing to verify: no BenchmarkRun, WorkloadCase or ImplementationRevision in what was "
                     "given (a run directory, a folder of them, or manifest files)");
  for (const auto &manifest : report.manifests) {
    for (const auto &note : manifest.notes) fmt::print("note  {}\n", io::printable(note));
    for (const auto &failure : manifest.failures) fmt::print("FAILED  {}\n", io::printable(failure));
    if (manifest.ok()) fmt::print("ok  {}\n", io::printable(manifest.label));
    if (manifest.comparison_key) fmt::print("comparison key  {}\n", *manifest.comparison_key);
  }
  const auto failures = report.failures();
  if (failures.size() == 1) throw CheckFailed(failures.front());
  if (failures.size() > 1) {
    throw CheckFailed(
        fmt::format("{} (and {} more mismatches above)", failures.front(), failures.size() - 1));
  }
  return 0;
}

} // namespace

void add_digest(CLI::App &app, Action &action) {
  CLI::App *command = app.add_subcommand(
      "digest",
      "Print the KernelIndex identity digest of each manifest, or verify the digests runs reference.");
  auto options = std::make_shared<DigestOptions>();
  command
      ->add_option("FILE", options->paths,
                   "Manifest files (one manifest, an array, or an object of manifests) or run directories")
      ->required();
  CLI::Option *json_flag =
      command->add_flag("--json", options->json, "One JSON object per manifest: {file, kind, name, digest}");
  CLI::Option *verify_flag = command->add_flag("--verify", options->verify,
                                               "Recompute every digest a BenchmarkRun, WorkloadCase or "
                                               "ImplementationRevision references (manifests and "
                                               "raw-sample files) and fail on a mismatch");
  json_flag->excludes(verify_flag);
  command->footer(R"(A digest is "sha256:" + hex SHA-256 of the RFC 8785 JSON of {apiVersion, kind, spec};
metadata never changes it. A file holding an object of manifests (a KernelIndex record's
{run, protocol, environment}) labels each one FILE#key; an array, FILE#index.

--verify checks each run's implementationDigest, workloadDigest, protocolDigest and
environmentDigest against the manifests given, a workload's operationSpecDigest against
the OperationSpec, and the sha256 of raw-sample and log files. A directory is a whole run:
every reference must be present in it. A lone file also reads the *.json manifests beside
it; a kind that is absent there is noted, not failed.

Examples:
  kibench digest workload.json operation.json
  kibench digest --json runs/h200-distill-jsd/
  kibench digest --verify runs/h200-distill-jsd/
  kibench digest --verify test/data/seed/seed-record.json

Exit codes: 0 all digests match, 1 a digest does not match, 2 unreadable or invalid input.)");
  command->callback([options, &action] {
    action = [options] { return options->verify ? verify_manifests(*options) : print_digests(*options); };
  });
}

} // namespace kibench::cli
