#include "lib/digest/verify.hpp"

#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/digest/file_reference.hpp"
#include "lib/error.hpp"
#include "lib/io/input_file.hpp"
#include "lib/json/path.hpp"

namespace kibench {
namespace {

using json::find_string_at;
using json::member_at;

struct DigestReference {
  std::string_view field;
  std::string_view kind;
};

constexpr DigestReference kRunImplementation{"spec.implementationDigest", "ImplementationRevision"};
constexpr DigestReference kRunWorkload{"spec.workloadDigest", "WorkloadCase"};
constexpr DigestReference kRunProtocol{"spec.protocolDigest", "BenchmarkProtocol"};
constexpr DigestReference kRunEnvironment{"spec.environmentDigest", "ExecutionEnvironment"};
constexpr DigestReference kWorkloadOperation{"spec.operationSpecDigest", "OperationSpec"};
constexpr DigestReference kImplementationOperation{"spec.operation.specDigest", "OperationSpec"};

// {uri, digest} pointers to files a run's evidence consists of.
constexpr std::string_view kRunFileReferences[] = {"spec.timing.rawSamples", "spec.evidence.rawSamples",
                                                   "spec.evidence.logs"};

class Verifier {
public:
  explicit Verifier(const ManifestSet &set) : set_(set) {}

  ManifestVerification check_run(const ManifestEntry &run,
                                 std::set<const ManifestEntry *> &referenced) const {
    ManifestVerification out = start(run);
    const ManifestEntry *implementation = resolve(run, kRunImplementation, out);
    const ManifestEntry *workload = resolve(run, kRunWorkload, out);
    const ManifestEntry *protocol = resolve(run, kRunProtocol, out);
    const ManifestEntry *environment = resolve(run, kRunEnvironment, out);
    for (const std::string_view field : kRunFileReferences) check_file(run, field, out);
    if (implementation != nullptr) referenced.insert(implementation);
    if (workload != nullptr) referenced.insert(workload);
    out.comparison_key = cohort_key(run, workload, protocol, environment, out);
    return out;
  }

  ManifestVerification check_operation_user(const ManifestEntry &entry) const {
    ManifestVerification out = start(entry);
    resolve(entry, entry.kind == "WorkloadCase" ? kWorkloadOperation : kImplementationOperation, out);
    return out;
  }

private:
  static ManifestVerification start(const ManifestEntry &entry) {
    ManifestVerification out;
    out.label = entry.label;
    out.kind = entry.kind;
    return out;
  }

  // The manifest of the referenced kind whose digest the subject names.
  const ManifestEntry *resolve(const ManifestEntry &subject, const DigestReference &reference,
                               ManifestVerification &out) const {
    const std::string *digest = find_string_at(subject.manifest, reference.field);
    if (digest == nullptr) {
      out.failures.push_back(fmt::format("{}: {}: missing (the digest of its {})", subject.label,
                                         reference.field, reference.kind));
      return nullptr;
    }
    const auto candidates = set_.of_kind(reference.kind);
    if (candidates.empty()) {
      if (subject.origin == ManifestOrigin::run_directory) {
        out.failures.push_back(fmt::format("{}: {}: {}: no {} in the run directory", subject.label,
                                           reference.field, *digest, reference.kind));
      } else {
        out.notes.push_back(fmt::format("{}: {}: {}: not present (no {} given); not checked", subject.label,
                                        reference.field, *digest, reference.kind));
      }
      return nullptr;
    }
    std::string others;
    for (const ManifestEntry *candidate : candidates) {
      if (candidate->digest == *digest) return candidate;
      others += fmt::format("{}{} ({})", others.empty() ? "" : " nor ", candidate->label, candidate->digest);
    }
    out.failures.push_back(
        fmt::format("{}: {}: {} does not match {}", subject.label, reference.field, *digest, others));
    return nullptr;
  }

  // A {uri, digest} whose file must hash to digest; the uri names a file in
  // the directory of the manifest's file (file_reference.hpp).
  static void check_file(const ManifestEntry &subject, std::string_view field, ManifestVerification &out) {
    const json::Value *pointer = member_at(subject.manifest, field);
    if (pointer == nullptr) return;
    const std::string *uri = find_string_at(*pointer, "uri");
    const std::string *digest = find_string_at(*pointer, "digest");
    if (uri == nullptr || digest == nullptr) {
      out.failures.push_back(
          fmt::format("{}: {}: needs a string \"uri\" and \"digest\"", subject.label, field));
      return;
    }
    std::optional<std::filesystem::path> path;
    std::string bytes;
    try {
      path = local_file_of(*uri, subject.file, subject.label, field);
      if (!path) {
        out.notes.push_back(
            fmt::format("{}: {}.uri: {}: not a local file; not checked", subject.label, field, *uri));
        return;
      }
      bytes = io::read_file(*path, io::file_kinds::manifest);
    } catch (const io::UnreadableFile &e) {
      out.failures.push_back(
          fmt::format("{}: {}.uri: cannot read {}: {}", subject.label, field, path->string(), e.reason()));
      return;
    } catch (const InputError &e) {
      out.failures.push_back(e.what());
      return;
    }
    const std::string actual = sha256_digest(bytes);
    if (actual != *digest) {
      out.failures.push_back(fmt::format("{}: {}.digest: {} does not match {} ({})", subject.label, field,
                                         *digest, *uri, actual));
    }
  }

  // The run's cohort (../kernelindex/README.md, "Comparison key"): needs
  // the workload, its operation, the protocol and the environment.
  std::optional<std::string> cohort_key(const ManifestEntry &run, const ManifestEntry *workload,
                                        const ManifestEntry *protocol, const ManifestEntry *environment,
                                        ManifestVerification &out) const {
    const ManifestEntry *operation = nullptr;
    if (workload != nullptr) {
      if (const std::string *digest = find_string_at(workload->manifest, kWorkloadOperation.field)) {
        for (const ManifestEntry *candidate : set_.of_kind(kWorkloadOperation.kind)) {
          if (candidate->digest == *digest) operation = candidate;
        }
      }
    }
    const json::Value *correctness =
        workload != nullptr ? member_at(workload->manifest, "spec.correctness") : nullptr;
    std::vector<std::string_view> missing;
    if (operation == nullptr) missing.push_back("OperationSpec");
    if (workload == nullptr)
      missing.push_back("WorkloadCase");
    else if (correctness == nullptr)
      missing.push_back("the WorkloadCase's spec.correctness");
    if (protocol == nullptr) missing.push_back("BenchmarkProtocol");
    if (environment == nullptr) missing.push_back("ExecutionEnvironment");
    if (!missing.empty()) {
      out.notes.push_back(fmt::format("{}: comparison key not computed: needs a matching {}", run.label,
                                      fmt::join(missing, ", ")));
      return std::nullopt;
    }
    // The metric names the protocol's primary statistic of latency in ns.
    const std::string *statistic = find_string_at(run.manifest, "spec.timing.primaryStatistic");
    if (statistic == nullptr)
      statistic = find_string_at(protocol->manifest, "spec.measurement.primaryStatistic");
    ComparisonKeyParts parts{
        .operation = operation->digest,
        .workload = workload->digest,
        .protocol = protocol->digest,
        .environment = environment->digest,
        .correctness = *correctness,
        .metric = fmt::format("latency:{}:ns", statistic != nullptr ? *statistic : "median"),
    };
    return comparison_key(parts);
  }

  const ManifestSet &set_;
};

} // namespace

bool VerifyReport::ok() const {
  for (const auto &manifest : manifests) {
    if (!manifest.ok()) return false;
  }
  return true;
}

std::vector<std::string> VerifyReport::failures() const {
  std::vector<std::string> out;
  for (const auto &manifest : manifests)
    out.insert(out.end(), manifest.failures.begin(), manifest.failures.end());
  return out;
}

VerifyReport verify(const ManifestSet &set) {
  const Verifier verifier(set);
  // Runs first: the workloads and implementations they reference are
  // checked too, even when read only as neighbours.
  std::map<const ManifestEntry *, ManifestVerification> runs;
  std::set<const ManifestEntry *> referenced;
  for (const auto &entry : set.entries()) {
    if (entry.kind == "BenchmarkRun" && entry.origin != ManifestOrigin::beside) {
      runs.emplace(&entry, verifier.check_run(entry, referenced));
    }
  }
  VerifyReport report;
  for (const auto &entry : set.entries()) {
    if (const auto run = runs.find(&entry); run != runs.end()) {
      report.manifests.push_back(std::move(run->second));
    } else if ((entry.kind == "WorkloadCase" || entry.kind == "ImplementationRevision") &&
               (entry.origin != ManifestOrigin::beside || referenced.contains(&entry))) {
      report.manifests.push_back(verifier.check_operation_user(entry));
    }
  }
  return report;
}

} // namespace kibench
