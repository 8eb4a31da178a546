#include "lib/export/submission_bundle.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/export/yaml_writer.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/envelope.hpp"

namespace kibench::exports {
namespace {

using json::member_at;
using json::string_at;

struct Project {
  std::string slug;
  json::Value manifest;
};

json::Value software_project(const std::string &name, json::Object spec) {
  spec.set("name", name);
  return make_manifest("SoftwareProject", json::Object{{"name", kebab(name)}}, std::move(spec));
}

// "https://github.com/linkedin/Liger-Kernel.git" → its project.
json::Value repository_project(const std::string &repository) {
  std::string path = repository;
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.ends_with(".git")) path.resize(path.size() - 4);
  const std::string name = path.substr(path.find_last_of('/') + 1);
  json::Object spec;
  if (repository.starts_with("https://")) spec.set("repository", repository);
  constexpr std::string_view github = "https://github.com/";
  if (path.starts_with(github))
    spec.set("host", json::Object{{"kind", "github"}, {"id", path.substr(github.size())}});
  return software_project(name.empty() ? repository : name, std::move(spec));
}

Project project_of(const ExportedRun &r) {
  json::Value manifest;
  if (r.project) {
    manifest = *r.project;
  } else if (const std::string repository = string_at(r.implementation, "spec.projectRevision.repository");
             !repository.empty()) {
    manifest = repository_project(repository);
  } else if (const json::Value *variants = member_at(r.implementation, "spec.buildVariants");
             variants != nullptr && variants->is_array() && !variants->as_array().empty() &&
             !string_at(variants->as_array().front(), "install.package").empty()) {
    const std::string package = string_at(variants->as_array().front(), "install.package");
    manifest = software_project(
        package,
        json::Object{{"packages", json::Array{json::Object{{"ecosystem", "pypi"}, {"name", package}}}}});
  } else if (string_at(r.implementation, "spec.callable.interface") == "kibench_implementation") {
    manifest = software_project("kibench", json::Object{});
  } else {
    manifest = software_project(string_at(r.implementation, "metadata.name"), json::Object{});
  }
  return Project{kebab(string_at(manifest, "metadata.name")), std::move(manifest)};
}

// Each identity once, in the order first met.
class Unique {
public:
  bool first(const std::string &key) { return seen_.insert(key).second; }

private:
  std::set<std::string> seen_;
};

std::string comment_line(const std::string &text) {
  return "# " + io::printable(text) + "\n";
}

} // namespace

SubmissionBundle render_submission(const std::vector<ExportedRun> &runs) {
  SubmissionBundle out;
  json::Array projects, operations, workloads, implementations, entries;
  Unique project_slugs, operation_digests, workload_digests, implementation_digests;
  std::vector<std::string> licences, raw_samples, published;

  for (const ExportedRun &r : runs) {
    const compare::ComparedRun &c = r.compared;
    const Project project = project_of(r);
    if (project_slugs.first(project.slug)) projects.push_back(project.manifest);
    if (operation_digests.first(c.operation_digest)) {
      if (r.operation)
        operations.push_back(*r.operation);
      else
        published.push_back(
            fmt::format("OperationSpec {} (named by workload {})", c.operation_digest, c.workload_name));
    }
    if (workload_digests.first(c.workload_digest)) workloads.push_back(r.workload);
    if (implementation_digests.first(c.implementation_digest)) {
      implementations.push_back(json::Object{{"projectSlug", project.slug}, {"manifest", r.implementation}});
      const std::string name = string_at(r.implementation, "metadata.name");
      const std::string licence = string_at(r.implementation, "spec.licensing.declared");
      if (licence.empty()) {
        licences.push_back(fmt::format("{}: none declared (KernelIndex shows its licence as unknown)", name));
        out.warnings.push_back(
            fmt::format("implementation {} ({}) declares no licence: KernelIndex will show "
                        "it as unknown, never as usable",
                        name, c.implementation_digest));
      } else {
        licences.push_back(fmt::format("{}: {}", name, licence));
      }
    }
    entries.push_back(json::Object{{"run", r.run}, {"protocol", r.protocol}, {"environment", r.environment}});
    if (const std::string uri = string_at(r.run, "spec.timing.rawSamples.uri"); !uri.empty())
      raw_samples.push_back(
          fmt::format("{}: {} {}", c.id, uri, string_at(r.run, "spec.timing.rawSamples.digest")));
  }

  std::string text;
  text += comment_line("KernelIndex PR-path submission (registry/submissions/ of KernelIndex), written by "
                       "kibench export.");
  text += comment_line(fmt::format("{} run{}, {} implementation{}, {} workload{}; every manifest as recorded "
                                   "(its digest unchanged).",
                                   entries.size(), entries.size() == 1 ? "" : "s", implementations.size(),
                                   implementations.size() == 1 ? "" : "s", workloads.size(),
                                   workloads.size() == 1 ? "" : "s"));
  text += comment_line("Licences (ImplementationRevision spec.licensing.declared):");
  for (const auto &line : licences) text += comment_line("  " + line);
  if (!raw_samples.empty()) {
    text += comment_line("Raw samples, not in this bundle (spec.timing.rawSamples: file and sha256):");
    for (const auto &line : raw_samples) text += comment_line("  " + line);
  }
  if (!published.empty()) {
    text += comment_line("Referenced and already published, not in this bundle:");
    for (const auto &line : published) text += comment_line("  " + line);
  }
  text += "---\n";
  const json::Object document{{"projects", std::move(projects)},
                              {"operations", std::move(operations)},
                              {"workloads", std::move(workloads)},
                              {"implementations", std::move(implementations)},
                              {"runs", std::move(entries)}};
  text += yaml_block(document);
  if (text.size() > kSubmissionDocumentLimit)
    throw InputError(fmt::format("kernelindex-submission: the bundle of {} runs is {} bytes; KernelIndex "
                                 "accepts a submission of at most {} bytes: export fewer runs per bundle",
                                 runs.size(), text.size(), kSubmissionDocumentLimit));
  out.text = std::move(text);
  return out;
}

} // namespace kibench::exports
