#include "lib/reproduce/reproduce.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/compare/run_loader.hpp"
#include "lib/error.hpp"
#include "lib/io/atomic_write.hpp"
#include "lib/io/output_directory.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/run_manifest.hpp"
#include "lib/reproduce/attestation.hpp"
#include "lib/reproduce/original_run.hpp"
#include "lib/reproduce/resolve.hpp"
#include "lib/run/implementation_files.hpp"
#include "lib/run/session.hpp"

namespace kibench::reproduce {
namespace {

namespace fs = std::filesystem;

struct Planned {
  OriginalRun original;
  ResolvedRun resolved;
};

// Refused before any work: an implementation that cannot run the case on
// this machine (no GPU, a case it does not support, a Python lane without
// its packages).
void require_runnable(const Backend &backend, const Planned &p) {
  const auto entries = backend.implementations();
  const auto entry = std::find_if(entries.begin(), entries.end(), [&](const ImplementationEntry &e) {
    return e.name == p.resolved.implementation;
  });
  const std::string what = fmt::format("{}: {} on {} ({} pass)", p.original.label, p.resolved.implementation,
                                       p.resolved.workload.name, to_string(p.resolved.pass));
  if (entry != entries.end() && entry->needs_gpu) {
    if (const auto missing = backend.gpu_unavailable_reason())
      throw InputError(fmt::format("{}: cannot run here: it needs a GPU ({})", what, *missing));
  }
  const auto implementation = backend.make(p.resolved.implementation);
  if (!implementation) throw InputError(fmt::format("{}: cannot run here: no such implementation", what));
  auto why = other_operation(*implementation, p.resolved.workload);
  if (!why) why = implementation->unsupported_for(p.resolved.workload, p.resolved.pass);
  if (why) throw InputError(fmt::format("{}: cannot run here: {}", what, *why));
}

// "sha256:0123456789ab..." -> "0123456789ab"
std::string digest_prefix(const std::string &digest) {
  const std::size_t colon = digest.find(':');
  return digest.substr(colon == std::string::npos ? 0 : colon + 1, 12);
}

std::string directory_name(const Planned &p) {
  std::string stamp = utc_timestamp_now();
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return fmt::format("{}-reproduce-{}-{}", stamp, p.resolved.implementation,
                     digest_prefix(p.original.digest));
}

ReproduceOutcome reproduce_one(const Backend &backend, const ReproduceOptions &options, const Planned &p) {
  io::StagedDirectory dir(options.out_dir / directory_name(p));
  SessionOptions session;
  session.workload_files = {p.resolved.workload_file};
  session.axes = p.resolved.axes;
  session.implementations = {p.resolved.implementation};
  session.out_dir = dir.staging_path();
  session.settings = options.settings;
  session.settings.pass = p.resolved.pass;
  session.lock_clocks = options.lock_clocks;
  session.label = options.label;
  session.extra_labels.set(std::string(kReproducesLabel), p.original.digest);
  session.note = options.note;
  session.progress = options.progress;
  const std::vector<WorkloadOutcome> outcomes = run_session(backend, session);
  if (outcomes.size() != 1)
    throw std::runtime_error(fmt::format("reproduce: expected one run directory, got {}", outcomes.size()));
  const WorkloadOutcome &outcome = outcomes.front();
  const std::string run_name = outcome.run_dir.filename().string();

  HereRun here;
  here.run_directory = run_name;
  here.workload = outcome.workload.manifest;
  for (const auto &[name, reason] : outcome.skipped)
    if (name == p.resolved.implementation) here.failure = fmt::format("skipped here: {}", reason);
  bool check_failed = false;
  for (const auto &i : outcome.implementations) {
    if (i.facts.name != p.resolved.implementation) continue;
    if (i.facts.failed()) here.failure = i.facts.failure;
    check_failed = is_failure(i.facts.status);
  }
  std::vector<compare::ComparedRun> runs;
  const fs::path implementation_file =
      outcome.run_dir / fmt::format("implementation.{}.json", p.resolved.implementation);
  if (fs::exists(implementation_file)) {
    here.implementation = json::parse_file(implementation_file);
    runs = compare::load_runs({outcome.run_dir});
  }
  const auto run = std::find_if(runs.begin(), runs.end(), [&](const compare::ComparedRun &r) {
    return r.implementation == p.resolved.implementation;
  });
  here.run = run == runs.end() ? nullptr : &*run;

  ReproduceOutcome out;
  out.verdict = make_verdict(p.original, p.resolved, here, options.tolerance, options.bootstrap);
  if (here.run != nullptr)
    out.verdict.here.label = fmt::format("{}/run.{}.json", run_name, p.resolved.implementation);
  out.attestation = attestation_body(out.verdict, options.evidence_url);
  out.check_failed = check_failed;
  dir.write("verdict.json", json_file_text(verdict_json(out.verdict)));
  dir.write("attestation.json", json_file_text(out.attestation));
  dir.commit();
  out.directory = dir.final_path();
  return out;
}

} // namespace

std::vector<ReproduceOutcome> reproduce_records(const BackendForPass &backend_for,
                                                const ReproduceOptions &options,
                                                const std::function<void(const ReproduceOutcome &)> &done) {
  // One backend per timed pass, made when first needed.
  std::map<Pass, std::unique_ptr<Backend>> backends;
  const auto backend = [&](Pass pass) -> const Backend & {
    auto &made = backends[pass];
    if (!made) made = backend_for(pass);
    return *made;
  };
  // 1. Everything that can be refused, before any work.
  if (!(options.tolerance > 0.0) || !(options.tolerance < 1.0))
    throw InputError(fmt::format("--tolerance: {} is not a fraction in (0, 1)", options.tolerance));
  check_evidence_url(options.evidence_url);
  std::vector<Planned> plans;
  const auto known = backend(Pass::full).implementations();
  for (OriginalRun &original : read_originals(options.records)) {
    ResolvedRun resolved = resolve(original, known);
    plans.push_back(Planned{std::move(original), std::move(resolved)});
  }
  for (const Planned &p : plans) require_runnable(backend(p.resolved.pass), p);
  io::prepare_output_directories({{options.out_dir, "--out"}});

  // 2. Each record, run and judged.
  std::vector<ReproduceOutcome> outcomes;
  for (const Planned &p : plans) {
    outcomes.push_back(reproduce_one(backend(p.resolved.pass), options, p));
    if (done) done(outcomes.back());
  }
  return outcomes;
}

} // namespace kibench::reproduce
