// The implementations plugins add to a run (include/kibench/kibench_plugin.h):
// those of shared libraries named with --plugin, and those a host program
// hands in (the Python package's lanes). Everything about them that can be
// refused is refused here, before any work, with one line naming the file
// and the symbol or field (InputError, exit 2): a library that does not
// load, a missing entry symbol, an ABI version it does not speak, a missing
// function, a name that is taken or malformed, an operation list it does
// not know, revision facts the manifest builder refuses. A version-1
// description is read into the current layout (its implementations
// compute distill_jsd_loss).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "include/kibench/kibench_plugin.h"
#include "lib/implementation/implementation.hpp"
#include "lib/implementation/revision_facts.hpp"

namespace kibench::plugin {

// One implementation a plugin provides, validated.
struct PluginEntry {
  std::string name;    // --impl name
  std::string summary; // for `kibench list`
  bool needs_gpu = false;
  bool computes_loss = true;
  RevisionFacts facts;
  std::string origin; // the library's path, or the host's name for in-process plugins
  const kibench_plugin_implementation *functions = nullptr;
  // The operations it computes (its `operations`, default distill_jsd_loss).
  std::vector<OperationKind> operations{OperationKind()};
  // Keeps the library loaded while an implementation of it exists.
  std::shared_ptr<const void> library;
  // A version-1 implementation read into the current layout (`functions`
  // points here then).
  std::shared_ptr<const kibench_plugin_implementation> upgraded;

  [[nodiscard]] bool runs(OperationKind kind) const;
  // `facts` with the operation `kind` (spec.operation of its revision).
  [[nodiscard]] RevisionFacts facts_for(OperationKind kind) const;
};

// A plugin description handed in by the program hosting kibench, with a
// name for messages (e.g. "python"); it must outlive the catalog.
struct InProcessPlugin {
  const kibench_plugin *plugin = nullptr;
  std::string origin;
};

// Where a plugin implementation runs (kibench run --isolation): in a
// worker process of its own (lib/worker/remote_implementation.hpp), or in
// kibench's. `automatic` (the default) is `process`: every plugin and
// Python implementation in a worker; `in_process` keeps them all in
// process.
enum class Isolation { automatic, process, in_process };
std::string_view to_string(Isolation isolation);
std::optional<Isolation> isolation_from_string(std::string_view text);
// Every name isolation_from_string reads, as "a, b or c".
std::string isolation_names();

// What prepare() tells a plugin about the run it is part of
// (kibench_plugin_inputs.pass and .timeout_s), and where it runs.
struct PluginRunSettings {
  Pass pass = Pass::full;
  double timeout_s = 60.0;
  Isolation isolation = Isolation::automatic;
  // The program and arguments that start a worker (`kibench worker`, or
  // the Python package's); empty where the hosting program gives none,
  // and then every plugin runs in process.
  std::vector<std::string> worker_command;
};

// Whether plugin implementations run in a worker process under `settings`.
[[nodiscard]] bool runs_in_worker(const PluginRunSettings &settings);
// The command that starts `entry`'s worker: settings.worker_command, the
// lane, the pass and timeout, and the library that provides it.
[[nodiscard]] std::vector<std::string> worker_argv(const struct PluginEntry &entry,
                                                   const PluginRunSettings &settings);

class PluginCatalog {
public:
  PluginCatalog() = default;
  // Loads every library and reads every description; `reserved` are the
  // names already taken (the built-in implementations).
  PluginCatalog(const std::vector<std::filesystem::path> &libraries,
                const std::vector<InProcessPlugin> &in_process, const std::vector<std::string> &reserved,
                PluginRunSettings settings = {});

  [[nodiscard]] const PluginRunSettings &settings() const { return settings_; }

  [[nodiscard]] const std::vector<std::shared_ptr<const PluginEntry>> &entries() const { return entries_; }
  // nullptr for a name no plugin provides.
  [[nodiscard]] std::shared_ptr<const PluginEntry> find(std::string_view name) const;

private:
  void add(const kibench_plugin &plugin, const std::string &origin,
           const std::shared_ptr<const void> &library, const std::vector<std::string> &reserved);
  std::vector<std::shared_ptr<const PluginEntry>> entries_;
  PluginRunSettings settings_;
};

// The RevisionFacts of a plugin implementation: its declared facts, the
// operation `kind`, and the interface "kibench_plugin".
[[nodiscard]] RevisionFacts plugin_revision_facts(const kibench_plugin_implementation &implementation,
                                                  const std::string &origin,
                                                  OperationKind kind = OperationKind());

// The operations an implementation lists (NULL: distill_jsd_loss); throws
// InputError naming `origin`, the implementation and the entry for an
// unknown name, a repeated one or an empty list.
[[nodiscard]] std::vector<OperationKind> declared_operations(const kibench_plugin_implementation &implementation,
                                                             const std::string &origin);

// The kibench_operation code and name of `kind` (its Operation's).
[[nodiscard]] inline std::int32_t operation_code(OperationKind kind) { return kind->abi_code(); }
[[nodiscard]] inline const char *operation_name(OperationKind kind) { return kind.name().data(); }

} // namespace kibench::plugin
