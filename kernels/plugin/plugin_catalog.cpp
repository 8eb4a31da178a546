#include "kernels/plugin/plugin_catalog.hpp"
#include "kernels/plugin/elf_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>

#include <dlfcn.h>
#include <fmt/core.h>

#include "kernels/builtin_revision.hpp"
#include "lib/digest/digest.hpp"
#include "lib/enum_names.hpp"
#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/io/text_rules.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/operations/registry.hpp"

namespace kibench::plugin {

namespace fs = std::filesystem;

namespace {

// More implementations than this in one plugin is a corrupt description.
constexpr std::int32_t kMaxImplementations = 1000;

std::string text(const char *value) {
  return value != nullptr ? std::string(value) : std::string();
}

std::vector<std::string> list(const char *const *values) {
  std::vector<std::string> out;
  for (std::size_t k = 0; values != nullptr && values[k] != nullptr && k < 100; ++k)
    out.emplace_back(values[k]);
  return out;
}

std::map<std::string, std::string> pairs(const kibench_plugin_pair *items, std::int32_t count,
                                         const std::string &origin, std::string_view field) {
  std::map<std::string, std::string> out;
  if (count < 0 || count > 1000 || (count > 0 && items == nullptr))
    throw InputError(
        fmt::format("{}: {}: count {} (0 to 1000, with a non-NULL array)", origin, field, count));
  for (std::int32_t k = 0; k < count; ++k) {
    if (items[k].key == nullptr || items[k].value == nullptr)
      throw InputError(fmt::format("{}: {}[{}]: key and value must not be NULL", origin, field, k));
    out[items[k].key] = items[k].value;
  }
  return out;
}

// dlopen searches the library path for a name without a slash: a file
// named on the command line is opened as a file.
std::shared_ptr<const void> open_library(const fs::path &path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw InputError(fmt::format("{}: --plugin: no such file", path.string()));
  if (!fs::is_regular_file(status))
    throw InputError(fmt::format("{}: --plugin: is {}, not a shared library file", path.string(),
                                 fs::is_directory(status) ? "a folder"
                                 : fs::is_fifo(status)    ? "a FIFO"
                                                          : "not a regular file"));
  if (const auto problem = elf_problem(path))
    throw InputError(fmt::format("{}: --plugin: not a loadable shared library: {}", path.string(), *problem));
  const fs::path absolute = fs::absolute(path);
  void *handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *why = dlerror();
    throw InputError(
        fmt::format("{}: --plugin: cannot load it: {}", path.string(), why ? why : "dlopen failed"));
  }
  return {handle, [](const void *h) { dlclose(const_cast<void *>(h)); }};
}

SourceFile library_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: --plugin: cannot read it", path.string()));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return SourceFile{sha256_digest(bytes), path.filename().string(), bytes.size()};
}

void require_function(bool present, const std::string &origin, const std::string &name,
                      std::string_view function) {
  if (!present)
    throw InputError(fmt::format("{}: implementation \"{}\": {} is NULL (include/kibench/kibench_plugin.h)", origin,
                                 name, function));
}

// Version 1's last member ends where version 2's first begins: a version-1
// implementation is the first KIBENCH_PLUGIN_IMPLEMENTATION_V1_SIZE bytes.
static_assert(offsetof(kibench_plugin_implementation, release) + sizeof(void (*)()) ==
              KIBENCH_PLUGIN_IMPLEMENTATION_V1_SIZE);

} // namespace

std::vector<OperationKind> declared_operations(const kibench_plugin_implementation &i,
                                               const std::string &origin) {
  if (i.operations == nullptr) return {OperationKind()};
  std::vector<OperationKind> out;
  for (std::size_t k = 0; i.operations[k] != nullptr; ++k) {
    const std::string_view name = i.operations[k];
    const std::optional<OperationKind> kind = find_operation_named(name);
    if (!kind)
      throw InputError(fmt::format("{}: implementation \"{}\": operations[{}] \"{}\": not an operation kibench "
                                   "runs ({})",
                                   origin, text(i.name), k, name, operation_names(", ")));
    if (std::find(out.begin(), out.end(), *kind) != out.end())
      throw InputError(fmt::format("{}: implementation \"{}\": operations[{}] \"{}\": listed twice", origin,
                                   text(i.name), k, name));
    out.push_back(*kind);
  }
  if (out.empty())
    throw InputError(
        fmt::format("{}: implementation \"{}\": operations is empty (NULL means distill_jsd_loss)", origin,
                    text(i.name)));
  return out;
}

bool PluginEntry::runs(OperationKind kind) const {
  return std::find(operations.begin(), operations.end(), kind) != operations.end();
}

RevisionFacts PluginEntry::facts_for(OperationKind kind) const {
  RevisionFacts f = facts;
  f.operation_digest = kind->digest();
  return f;
}

RevisionFacts plugin_revision_facts(const kibench_plugin_implementation &i, const std::string &origin,
                                    OperationKind kind) {
  const kibench_plugin_revision &r = i.revision;
  RevisionFacts f;
  f.name = text(r.name);
  f.title = text(r.title);
  f.description = text(r.description);
  f.operation_digest = kind->digest();
  f.language = text(r.language);
  f.source_path = text(r.path);
  f.symbol = text(r.symbol);
  f.interface = "kibench_plugin";
  f.architectures = list(r.architectures);
  f.dtypes = r.dtypes != nullptr ? list(r.dtypes) : std::vector<std::string>{"bf16"};
  f.layouts = {"row_major"};
  f.source.version = text(r.version);
  f.source.repository = text(r.repository);
  f.source.commit = text(r.commit);
  f.source.tree_digest = text(r.tree_digest);
  f.licence = text(r.licence);
  f.labels = pairs(r.labels, r.label_count, origin, "revision.labels");
  if (r.source_digest != nullptr)
    f.source_file = SourceFile{text(r.source_digest), text(r.source_file_name),
                               r.source_size_bytes > 0 ? static_cast<std::uint64_t>(r.source_size_bytes) : 0};
  auto requirements = pairs(r.requirements, r.requirement_count, origin, "revision.requirements");
  if (r.package != nullptr) {
    f.package = PackageFacts{text(r.package), text(r.package_version), std::move(requirements)};
  } else if (!requirements.empty()) {
    throw InputError(fmt::format("{}: implementation \"{}\": revision.requirements need revision.package",
                                 origin, text(i.name)));
  }
  return f;
}

PluginCatalog::PluginCatalog(const std::vector<fs::path> &libraries,
                             const std::vector<InProcessPlugin> &in_process,
                             const std::vector<std::string> &reserved, PluginRunSettings settings)
    : settings_(settings) {
  for (const auto &path : libraries) {
    auto library = open_library(path);
    dlerror();
    void *symbol = dlsym(const_cast<void *>(library.get()), KIBENCH_PLUGIN_ENTRY_SYMBOL);
    if (symbol == nullptr)
      throw InputError(fmt::format("{}: --plugin: no symbol {} (a kibench plugin exports it; "
                                   "include/kibench/kibench_plugin.h)",
                                   path.string(), KIBENCH_PLUGIN_ENTRY_SYMBOL));
    const auto entry = reinterpret_cast<kibench_plugin_entry_fn>(symbol);
    const kibench_plugin *plugin = entry(KIBENCH_PLUGIN_ABI_VERSION);
    if (plugin == nullptr)
      throw InputError(fmt::format("{}: {} returned NULL", path.string(), KIBENCH_PLUGIN_ENTRY_SYMBOL));
    const std::size_t first = entries_.size();
    add(*plugin, path.string(), library, reserved);
    // The library's bytes are what ran: its digest tells two builds apart
    // even when the facts it declares are the same.
    const SourceFile file = library_file(path);
    const std::optional<std::string> build_id = elf_build_id(path);
    for (std::size_t k = first; k < entries_.size(); ++k) {
      auto changed = std::make_shared<PluginEntry>(*entries_[k]);
      changed->facts.source_file = file;
      if (build_id) changed->facts.labels["library_build_id"] = *build_id;
      entries_[k] = std::move(changed);
    }
  }
  for (const auto &p : in_process) {
    if (p.plugin == nullptr) throw InputError(fmt::format("{}: plugin description is NULL", p.origin));
    add(*p.plugin, p.origin, nullptr, reserved);
  }
}

void PluginCatalog::add(const kibench_plugin &plugin, const std::string &origin,
                        const std::shared_ptr<const void> &library,
                        const std::vector<std::string> &reserved) {
  if (plugin.abi_version < KIBENCH_PLUGIN_ABI_VERSION_OLDEST ||
      plugin.abi_version > KIBENCH_PLUGIN_ABI_VERSION)
    throw InputError(fmt::format("{}: {}: plugin ABI version {}, this kibench speaks {} to {} (rebuild it "
                                 "against this kibench's kibench_plugin.h)",
                                 origin, KIBENCH_PLUGIN_ENTRY_SYMBOL, plugin.abi_version,
                                 KIBENCH_PLUGIN_ABI_VERSION_OLDEST, KIBENCH_PLUGIN_ABI_VERSION));
  const std::int32_t count = plugin.implementation_count;
  if (count <= 0 || count > kMaxImplementations || plugin.implementations == nullptr)
    throw InputError(fmt::format("{}: implementation_count {}: a plugin lists 1 to {} implementations",
                                 origin, count, kMaxImplementations));
  for (std::int32_t k = 0; k < count; ++k) {
    // A version-1 array has version-1 strides; its members are the current
    // layout's first ones, and what version 2 appended stays zero (NULL
    // operations: distill_jsd_loss).
    std::shared_ptr<kibench_plugin_implementation> upgraded;
    if (plugin.abi_version == 1) {
      upgraded = std::make_shared<kibench_plugin_implementation>();
      std::memcpy(upgraded.get(),
                  reinterpret_cast<const unsigned char *>(plugin.implementations) +
                      static_cast<std::size_t>(k) * KIBENCH_PLUGIN_IMPLEMENTATION_V1_SIZE,
                  KIBENCH_PLUGIN_IMPLEMENTATION_V1_SIZE);
    }
    const kibench_plugin_implementation &i = upgraded ? *upgraded : plugin.implementations[k];
    const std::string name = text(i.name);
    if (name.size() > 100 || !io::is_lowercase_name(name))
      throw InputError(
          fmt::format("{}: implementations[{}].name \"{}\": must match [a-z0-9][a-z0-9._-]* (at most "
                      "100 characters)",
                      origin, k, io::printable(io::excerpt(name))));
    if (std::find(reserved.begin(), reserved.end(), name) != reserved.end())
      throw InputError(
          fmt::format("{}: implementation \"{}\": a built-in implementation has this name", origin, name));
    if (const auto taken = find(name))
      throw InputError(fmt::format("{}: implementation \"{}\": {} provides one of this name already", origin,
                                   name, taken->origin));
    require_function(i.create != nullptr, origin, name, "create");
    require_function(i.destroy != nullptr, origin, name, "destroy");
    require_function(i.prepare != nullptr, origin, name, "prepare");
    require_function(i.run != nullptr, origin, name, "run");
    require_function(i.outputs != nullptr, origin, name, "outputs");
    require_function(i.release != nullptr, origin, name, "release");
    PluginEntry entry;
    entry.name = name;
    entry.summary = text(i.summary);
    entry.needs_gpu = i.needs_gpu != 0;
    entry.computes_loss = i.computes_loss != 0;
    entry.origin = origin;
    entry.functions = &i;
    entry.upgraded = upgraded;
    entry.library = library;
    entry.operations = declared_operations(i, origin);
    try {
      entry.facts = plugin_revision_facts(i, origin, entry.operations.front());
      static_cast<void>(implementation_manifest(entry.facts));
    } catch (const InputError &e) {
      throw InputError(fmt::format("{}: revision facts: {}", origin, e.what()));
    }
    entries_.push_back(std::make_shared<const PluginEntry>(std::move(entry)));
  }
}

std::shared_ptr<const PluginEntry> PluginCatalog::find(std::string_view name) const {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto &e) { return e->name == name; });
  return it == entries_.end() ? nullptr : *it;
}

namespace {
constexpr EnumName<Isolation> kIsolationNames[] = {
    {Isolation::automatic, "auto"}, {Isolation::process, "process"}, {Isolation::in_process, "in-process"}};
} // namespace

std::string_view to_string(Isolation isolation) {
  return name_in(kIsolationNames, isolation, "auto");
}

std::optional<Isolation> isolation_from_string(std::string_view text) {
  return value_named(kIsolationNames, text);
}

std::string isolation_names() {
  return names_listed(kIsolationNames);
}

bool runs_in_worker(const PluginRunSettings &settings) {
  // `automatic` isolates every foreign implementation, GPU ones too: on an
  // H100 a worker's medians were those of kibench's own process within
  // their spread (docs/protocol.md, "In a worker process and in kibench's").
  return !settings.worker_command.empty() && settings.isolation != Isolation::in_process;
}

std::vector<std::string> worker_argv(const PluginEntry &entry, const PluginRunSettings &settings) {
  std::vector<std::string> argv = settings.worker_command;
  argv.insert(argv.end(), {"--lane", entry.name, "--pass", std::string(to_string(settings.pass)), "--timeout",
                           fmt::format("{}", settings.timeout_s)});
  // A library's implementation: the worker loads that library alone. A
  // host's (the Python lanes): the host's worker command hands them in.
  if (entry.library) argv.insert(argv.end(), {"--plugin", entry.origin});
  return argv;
}

} // namespace kibench::plugin
