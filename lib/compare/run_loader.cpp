#include "lib/compare/run_loader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "lib/compare/environment_drift.hpp"
#include "lib/compare/protocol_terms.hpp"
#include "lib/digest/digest.hpp"
#include "lib/digest/file_reference.hpp"
#include "lib/digest/manifest_set.hpp"
#include "lib/error.hpp"
#include "lib/harness/raw_samples.hpp"
#include "lib/harness/setting_ranges.hpp"
#include "lib/io/input_file.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::compare {
namespace {

namespace fs = std::filesystem;

using json::member_at;
using json::string_at;

// metadata.name, else (canonical bodies carry no metadata) enough of the
// digest to tell manifests apart.
std::string display_name(const ManifestEntry &entry) {
  if (!entry.name.empty()) return entry.name;
  constexpr std::size_t shown = std::string_view("sha256:").size() + 12;
  return entry.digest.substr(0, shown);
}

std::size_t count_runs(const ManifestSet &set, std::size_t from) {
  std::size_t runs = 0;
  for (std::size_t i = from; i < set.entries().size(); ++i) runs += set.entries()[i].kind == "BenchmarkRun";
  return runs;
}

// A run directory, or else a directory of run directories (one level).
// Hidden directories are passed over: `kibench run` and the importers stage
// a directory under a hidden name (".<name>.partial-XXXXXX",
// ".import-XXXXXX") and rename it into place only when it is complete, so a
// hidden one may be half-written.
void add_run_directory(ManifestSet &set, const fs::path &directory) {
  const std::size_t before = set.entries().size();
  set.add_directory(directory);
  if (count_runs(set, before) > 0) return;
  std::vector<fs::path> children;
  for (const auto &item : fs::directory_iterator(directory)) {
    if (item.is_directory() && !item.path().filename().string().starts_with('.'))
      children.push_back(item.path());
  }
  std::sort(children.begin(), children.end());
  for (const auto &child : children) set.add_directory(child);
}

class RunReader {
public:
  explicit RunReader(const ManifestSet &set) : set_(set) {
    for (std::size_t i = 0; i < set.entries().size(); ++i) by_digest_.emplace(set.entries()[i].digest, i);
  }

  ComparedRun read(const ManifestEntry &entry) const {
    const json::Value &run = entry.manifest;
    ComparedRun out;
    out.label = entry.label;
    out.file = entry.file;
    out.digest = entry.digest;
    out.name = entry.name;
    const std::string status = string_at(run, "spec.status");
    if (status.empty()) throw InputError(fmt::format("{}: spec.status: missing", entry.label));
    const auto parsed = run_status_from_string(status);
    if (!parsed)
      throw InputError(fmt::format("{}: spec.status: {:?} is not a BenchmarkRun status ({})", entry.label,
                                   status, run_status_names()));
    out.status = *parsed;

    const ManifestEntry &workload = resolve(entry, "spec.workloadDigest", "WorkloadCase");
    const ManifestEntry &protocol = resolve(entry, "spec.protocolDigest", "BenchmarkProtocol");
    const ManifestEntry &environment = resolve(entry, "spec.environmentDigest", "ExecutionEnvironment");
    const ManifestEntry &implementation =
        resolve(entry, "spec.implementationDigest", "ImplementationRevision");

    out.workload_digest = workload.digest;
    out.protocol_digest = protocol.digest;
    out.environment_digest = environment.digest;
    out.implementation_digest = implementation.digest;
    out.operation_digest = string_at(workload.manifest, "spec.operationSpecDigest");
    if (out.operation_digest.empty())
      throw InputError(fmt::format("{}: spec.operationSpecDigest: missing", workload.label));
    const json::Value *correctness = member_at(workload.manifest, "spec.correctness");
    if (correctness == nullptr || !correctness->is_object())
      throw InputError(fmt::format("{}: spec.correctness: missing (the correctness policy is part of the "
                                   "comparison key)",
                                   workload.label));
    out.correctness = *correctness;
    // The metric names the primary statistic of latency in ns, as
    // `kibench digest --verify` computes the key.
    std::string statistic = string_at(run, "spec.timing.primaryStatistic");
    if (statistic.empty()) statistic = string_at(protocol.manifest, "spec.measurement.primaryStatistic");
    out.metric = fmt::format("latency:{}:ns", statistic.empty() ? "median" : statistic);
    out.comparison_key = comparison_key(ComparisonKeyParts{.operation = out.operation_digest,
                                                           .workload = out.workload_digest,
                                                           .protocol = out.protocol_digest,
                                                           .environment = out.environment_digest,
                                                           .correctness = out.correctness,
                                                           .metric = out.metric});
    out.drift_comparison_key =
        comparison_key(ComparisonKeyParts{.operation = out.operation_digest,
                                          .workload = out.workload_digest,
                                          .protocol = out.protocol_digest,
                                          .environment = drift_equivalence_key(environment.manifest),
                                          .correctness = out.correctness,
                                          .metric = out.metric});
    out.protocol = protocol.manifest;
    out.environment = environment.manifest;

    out.workload_name = display_name(workload);
    out.environment_name = display_name(environment);
    out.protocol_name = display_name(protocol);
    out.protocol_family = string_at(protocol.manifest, "spec.comparability.family");
    out.upstream_source = string_at(run, "spec.sourceNative.source");
    const std::string_view notes = comparability_notes(protocol.manifest);
    if (const auto effect = minimum_effect_in(notes)) {
      out.minimum_effect = *effect;
      out.minimum_effect_stated = true;
    }
    out.interleaved = states_interleaving(notes);
    out.rotated_order = states_rotated_order(notes);

    out.run_label = string_at(run, "metadata.labels.run_label");
    out.timed_with = io::printable(string_at(run, "metadata.labels.timed_with"));
    out.implementation = string_at(run, "metadata.labels.implementation");
    if (out.implementation.empty()) out.implementation = implementation.name;
    if (out.implementation.empty()) out.implementation = out.name.empty() ? display_name(entry) : out.name;

    std::optional<double> reported;
    if (const json::Value *median = member_at(run, "spec.timing.latencyNs.median")) {
      reported = latency_ns(*median);
      if (!reported)
        throw InputError(fmt::format("{}: spec.timing.latencyNs.median: not a latency (integer ns or "
                                     "\"<number> ns|us|µs|ms|s\")",
                                     entry.label));
      if (*reported > setting_ranges::kMaxSampleNs)
        throw InputError(
            fmt::format("{}: spec.timing.latencyNs.median: {} ns is longer than a latency may be "
                        "({} ns)",
                        entry.label, *reported, setting_ranges::kMaxSampleNs));
    }
    // A run whose calibration sentinels were outside the machine's control
    // limits, or drifted, says so wherever it is compared.
    if (const std::string calibration = string_at(run, "metadata.labels.calibration_caveat"); !calibration.empty())
      out.caveats.push_back("calibration: " + io::printable(calibration));
    out.raw = raw_samples_of(entry, out.raw_missing);
    if (out.raw) {
      out.median_ns = stats::median(out.raw->nanoseconds());
      if (reported && std::fabs(std::round(*out.median_ns) - *reported) > 1.0) {
        out.caveats.push_back(
            fmt::format("its raw samples' median ({} ns) differs from the median it reports "
                        "({} ns); the raw samples are used",
                        std::round(*out.median_ns), *reported));
      }
    } else {
      out.median_ns = reported;
    }
    // Names come from files anyone can write, and every printer shows them:
    // made safe for a terminal here, once (escape sequences, line breaks).
    for (std::string *shown :
         {&out.label, &out.name, &out.implementation, &out.workload_name, &out.environment_name,
          &out.protocol_name, &out.protocol_family, &out.upstream_source, &out.raw_missing, &out.run_label})
      *shown = io::printable(*shown);
    return out;
  }

private:
  // The manifest of `kind` whose digest the run names at `field`.
  const ManifestEntry &resolve(const ManifestEntry &run, std::string_view field,
                               std::string_view kind) const {
    const std::string digest = string_at(run.manifest, field);
    if (digest.empty())
      throw InputError(fmt::format("{}: {}: missing (the digest of its {})", run.label, field, kind));
    for (auto [it, end] = by_digest_.equal_range(digest); it != end; ++it) {
      const ManifestEntry &candidate = set_.entries()[it->second];
      if (candidate.kind == kind) return candidate;
    }
    // Name the manifests of that kind beside the run: one of them with
    // another digest means an edited file, not a missing one.
    std::vector<std::string> beside;
    for (const ManifestEntry *other : set_.of_kind(kind)) {
      if (other->file.parent_path() == run.file.parent_path())
        beside.push_back(fmt::format("{} is {}", other->label, other->digest));
    }
    if (!beside.empty()) {
      throw CheckFailed(fmt::format("{}: {}: {} does not match its {} ({})", run.label, field, digest, kind,
                                    fmt::join(beside, "; ")));
    }
    throw InputError(
        fmt::format("{}: {}: {}: no {} with this digest among the manifests given or beside them "
                    "(give the run's whole directory)",
                    run.label, field, digest, kind));
  }

  const ManifestSet &set_;
  std::multimap<std::string, std::size_t> by_digest_;
};

// Implementation names, made unique: a name given once stays as it is; a
// repeated one carries its run label (`kibench run --label`),
// "fused[main]", "fused[pr-7]", or without one is numbered in the order
// given, "cpu-reference[1]", "cpu-reference[2]" (with one run directory per
// argument, the number of its argument). A label two runs of one
// implementation share is numbered too: "fused[main 1]", "fused[main 2]".
void assign_ids(std::vector<ComparedRun> &runs) {
  std::map<std::string, std::size_t> uses;
  std::map<std::pair<std::string, std::string>, std::size_t> label_uses;
  for (const auto &run : runs) {
    ++uses[run.implementation];
    if (!run.run_label.empty()) ++label_uses[{run.implementation, run.run_label}];
  }
  std::map<std::string, std::size_t> numbered;
  std::map<std::pair<std::string, std::string>, std::size_t> label_numbered;
  for (auto &run : runs) {
    if (uses[run.implementation] == 1) {
      run.id = run.implementation;
    } else if (run.run_label.empty()) {
      run.id = fmt::format("{}[{}]", run.implementation, ++numbered[run.implementation]);
    } else if (const std::pair key{run.implementation, run.run_label}; label_uses[key] == 1) {
      run.id = fmt::format("{}[{}]", run.implementation, run.run_label);
    } else {
      run.id = fmt::format("{}[{} {}]", run.implementation, run.run_label, ++label_numbered[key]);
    }
  }
}

} // namespace

std::optional<RawSeries> raw_samples_of(const ManifestEntry &run, std::string &missing) {
  std::string_view field = "spec.timing.rawSamples";
  const json::Value *pointer = member_at(run.manifest, field);
  if (pointer == nullptr) {
    field = "spec.evidence.rawSamples";
    pointer = member_at(run.manifest, field);
  }
  if (pointer == nullptr) {
    missing = "no raw samples (spec.timing.rawSamples absent): only the median it reports";
    return std::nullopt;
  }
  const std::string uri = string_at(*pointer, "uri");
  const std::string digest = string_at(*pointer, "digest");
  if (uri.empty() || digest.empty())
    throw InputError(fmt::format("{}: {}: needs a string \"uri\" and \"digest\"", run.label, field));
  const std::optional<fs::path> path = local_file_of(uri, run.file, run.label, field);
  if (!path) {
    missing =
        fmt::format("raw samples at {} are not a local file: only the median it reports", uri);
    return std::nullopt;
  }
  std::string bytes;
  try {
    bytes = io::read_file(*path, io::file_kinds::manifest);
  } catch (const io::UnreadableFile &e) {
    throw InputError(
        fmt::format("{}: {}.uri: cannot read {}: {}", run.label, field, path->string(), e.reason()));
  }
  if (const std::string actual = sha256_digest(bytes); actual != digest) {
    throw CheckFailed(fmt::format("{}: its sha256 {} does not match {}.digest {} of {}", path->string(),
                                  actual, field, digest, run.label));
  }
  RawSeries series;
  series.file = *path;
  const Measurement measurement =
      read_raw_samples(json::parse(bytes, path->string()), path->string(), &series.invocation);
  for (std::size_t i = 0; i < measurement.samples.size(); ++i) {
    const double ns = measurement.samples[i].ns;
    if (!(ns > 0.0))
      throw InputError(fmt::format("{}: $.samples[{}].ns: a latency must be positive", path->string(), i));
    if (ns > setting_ranges::kMaxSampleNs)
      throw InputError(fmt::format("{}: $.samples[{}].ns: {} ns is longer than a sample may be ({} ns)",
                                   path->string(), i, ns, setting_ranges::kMaxSampleNs));
  }
  series.samples = measurement.samples;
  return series;
}

std::vector<double> RawSeries::nanoseconds() const {
  std::vector<double> out;
  out.reserve(samples.size());
  for (const auto &sample : samples) out.push_back(sample.ns);
  return out;
}

std::optional<double> latency_ns(const json::Value &value) {
  if (value.is_number())
    return value.as_number() >= 0 ? std::optional<double>(value.as_number()) : std::nullopt;
  if (!value.is_string()) return std::nullopt;
  // "<digits>[.<digits>][ ]<unit>", read in one pass; a latency is never
  // longer than this, and a longer string is not one.
  constexpr std::size_t kMaxChars = 64;
  const std::string_view text = value.as_string();
  if (text.size() > kMaxChars) return std::nullopt;
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t end = 0;
  while (end < text.size() && is_digit(text[end])) ++end;
  if (end == 0) return std::nullopt;
  if (end < text.size() && text[end] == '.') {
    const std::size_t fraction = ++end;
    while (end < text.size() && is_digit(text[end])) ++end;
    if (end == fraction) return std::nullopt;
  }
  double number = 0;
  if (const auto [at, error] = std::from_chars(text.data(), text.data() + end, number);
      error != std::errc() || at != text.data() + end || !std::isfinite(number))
    return std::nullopt;
  std::string_view unit = text.substr(end);
  if (!unit.empty() && std::string_view(" \t\n\v\f\r").find(unit.front()) != std::string_view::npos)
    unit.remove_prefix(1);
  if (unit == "ns") return number;
  if (unit == "us" || unit == "µs") return number * 1e3;
  if (unit == "ms") return number * 1e6;
  if (unit == "s") return number * 1e9;
  return std::nullopt;
}

std::vector<ComparedRun> load_runs(const std::vector<fs::path> &arguments) {
  if (arguments.empty()) throw InputError("compare: no RUN given");
  ManifestSet set;
  // Runs named again (the same directory twice, a run file and its
  // directory): read once, and the run says so.
  std::map<fs::path, std::string> repeated;
  const auto identity = [](const fs::path &file) {
    std::error_code ignored;
    const fs::path canonical = fs::weakly_canonical(file, ignored);
    return canonical.empty() ? fs::absolute(file).lexically_normal() : canonical;
  };
  const auto add = [](ManifestSet &into, const fs::path &path) {
    if (fs::is_directory(path)) {
      add_run_directory(into, path);
    } else if (fs::exists(path)) {
      into.add_file(path);
    } else {
      throw InputError(fmt::format("{}: no such file or directory", path.string()));
    }
  };
  for (const fs::path &path : arguments) {
    const std::size_t before = set.entries().size();
    add(set, path);
    if (count_runs(set, before) > 0) continue;
    ManifestSet alone;
    add(alone, path);
    if (count_runs(alone, 0) == 0)
      throw InputError(fmt::format("{}: no BenchmarkRun in it (give a run manifest, a run directory or an "
                                   "imported record directory)",
                                   path.string()));
    for (const ManifestEntry &entry : alone.entries())
      if (entry.kind == "BenchmarkRun")
        repeated.emplace(identity(entry.file), fmt::format("named again ({}): read once", path.string()));
  }
  const std::size_t named = set.entries().size();
  // Neighbours after every named path, so that a named file is never
  // demoted to one merely found beside another.
  for (const auto &path : arguments) {
    if (!fs::is_directory(path)) set.add_beside(path);
  }

  const RunReader reader(set);
  std::vector<ComparedRun> runs;
  for (std::size_t i = 0; i < named; ++i) {
    const ManifestEntry &entry = set.entries()[i];
    if (entry.kind == "BenchmarkRun") runs.push_back(reader.read(entry));
  }
  for (ComparedRun &run : runs)
    if (const auto note = repeated.find(identity(run.file)); note != repeated.end())
      run.caveats.push_back(io::printable(note->second));
  assign_ids(runs);
  return runs;
}

} // namespace kibench::compare
