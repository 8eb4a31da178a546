// The implementations plugins add to a run (apps/capi/kibench_plugin.h):
// those of shared libraries named with --plugin, and those a host program
// hands in (the Python package's lanes). Everything about them that can be
// refused is refused here, before any work, with one line naming the file
// and the symbol or field (InputError, exit 2): a library that does not
// load, a missing entry symbol, another ABI version, a missing function, a
// name that is taken or malformed, revision facts the manifest builder
// refuses.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "apps/capi/kibench_plugin.h"
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
  // Keeps the library loaded while an implementation of it exists.
  std::shared_ptr<const void> library;
};

// A plugin description handed in by the program hosting kibench, with a
// name for messages (e.g. "python"); it must outlive the catalog.
struct InProcessPlugin {
  const kibench_plugin *plugin = nullptr;
  std::string origin;
};

// What prepare() tells a plugin about the run it is part of
// (kibench_plugin_inputs.pass and .timeout_s).
struct PluginRunSettings {
  Pass pass = Pass::full;
  double timeout_s = 60.0;
};

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
// operation kibench measures, and the interface "kibench_plugin".
[[nodiscard]] RevisionFacts plugin_revision_facts(const kibench_plugin_implementation &implementation,
                                                  const std::string &origin);

} // namespace kibench::plugin
