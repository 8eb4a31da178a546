// Shared by the compare tests: synthetic latency series, and run
// directories written with the real manifest builders (so every reference
// resolves by digest exactly as in a `kibench run` directory).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/digest/digest.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/harness/raw_samples.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/envelope.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/manifest/run_manifest.hpp"
#include "lib/stats/summary.hpp"
#include "test/source_tree.hpp"

namespace kibench::test {

// Standard normal draws from a seeded engine (Box-Muller on 53-bit
// uniforms), identical on every platform.
class Normal {
public:
  explicit Normal(std::uint64_t seed) : engine_(seed) {}
  double operator()() {
    const double u1 = uniform_open();
    const double u2 = uniform_open();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

private:
  double uniform_open() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
  std::mt19937_64 engine_;
};

// n latencies median_ns * (1 + noise * z), optionally times a per-round
// drift factor (shared between series built from the same drift).
inline std::vector<double> noisy_series(std::size_t n, double median_ns, double noise, Normal &normal,
                                        const std::vector<double> &drift = {}) {
  std::vector<double> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    out[k] = median_ns * (1.0 + noise * normal()) * (drift.empty() ? 1.0 : drift[k]);
  }
  return out;
}

// A rankable in-memory run: status passed, raw samples with round = index,
// in one cohort with every other synthetic run.
inline compare::ComparedRun synthetic_run(std::string id, const std::vector<double> &ns,
                                          std::string invocation, double minimum_effect = 0.01) {
  compare::ComparedRun run;
  run.id = run.implementation = run.name = id;
  run.digest = sha256_digest(id);
  run.status = RunStatus::passed;
  run.comparison_key = "synthetic";
  run.minimum_effect = minimum_effect;
  run.minimum_effect_stated = true;
  compare::RawSeries raw;
  raw.invocation = std::move(invocation);
  for (std::size_t k = 0; k < ns.size(); ++k) raw.samples.push_back(Sample{.ns = ns[k], .round = k});
  run.raw = std::move(raw);
  run.median_ns = stats::median(ns);
  return run;
}

inline void write_file(const std::filesystem::path &path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_file(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_manifest(const std::filesystem::path &path, const json::Value &manifest) {
  write_file(path, json::pretty(manifest) + "\n");
}

inline json::Object &spec_of(json::Value &manifest) {
  return manifest.as_object().find("spec")->as_object();
}

// What the runs of one directory share.
struct FixtureCase {
  json::Value operation, workload, protocol, environment;

  // The small CPU workload, kibench's CPU protocol, a test host.
  static FixtureCase standard() {
    const std::filesystem::path workloads = kibench::test::source_dir() / "workloads";
    FixtureCase c;
    c.operation = json::parse_file(workloads / "operations" / "distill_jsd_loss.json");
    c.workload = json::parse_file(workloads / "small" / "small-v1000-h64-t32.json");
    ProtocolSettings settings;
    settings.timer = "steady_clock";
    settings.cold = false;
    c.protocol = protocol_manifest(settings, "cpu-fp64", {});
    c.environment = make_manifest(
        "ExecutionEnvironment", json::Object{{"name", "test-host"}},
        json::Object{{"hardware",
                      json::Object{{"vendor", "test"}, {"product", "Test CPU"}, {"architecture", "x86_64"}}},
                     {"software", json::Object{}}});
    return c;
  }
};

struct FixtureRun {
  FixtureRun(std::string implementation_name, std::vector<double> samples_ns)
      : implementation(std::move(implementation_name)), ns(std::move(samples_ns)) {}
  FixtureRun &with_status(std::string run_status) {
    status = std::move(run_status);
    return *this;
  }
  FixtureRun &in_invocation(std::string id) {
    invocation = std::move(id);
    return *this;
  }
  FixtureRun &without_raw_samples() {
    raw_samples = false;
    return *this;
  }

  std::string implementation;
  std::vector<double> ns;        // one sample each, round = index
  std::string status = "passed"; // spec.status as the manifest spells it, whatever it says
  std::string invocation = "invocation-1";
  bool raw_samples = true;
};

// Writes operation.json, workload.json, protocol.json, environment.json and
// per run implementation.<impl>.json, samples.<impl>.json, run.<impl>.json.
inline void write_run_directory(const std::filesystem::path &dir, const FixtureCase &c,
                                const std::vector<FixtureRun> &runs) {
  std::filesystem::create_directories(dir);
  write_manifest(dir / "operation.json", c.operation);
  write_manifest(dir / "workload.json", c.workload);
  write_manifest(dir / "protocol.json", c.protocol);
  write_manifest(dir / "environment.json", c.environment);
  const std::string operation_digest = manifest_digest(c.operation);
  for (const FixtureRun &r : runs) {
    const json::Value implementation =
        make_manifest("ImplementationRevision", json::Object{{"name", r.implementation}},
                      json::Object{{"operation", json::Object{{"specDigest", operation_digest}}},
                                   {"callable", json::Object{{"language", "cpp"}}}});
    write_manifest(dir / ("implementation." + r.implementation + ".json"), implementation);

    Measurement m;
    m.implementation = r.implementation;
    m.timer = "steady_clock";
    m.stop_reason = "max_samples";
    for (std::size_t k = 0; k < r.ns.size(); ++k) m.samples.push_back(Sample{.ns = r.ns[k], .round = k});
    const std::string samples_name = "samples." + r.implementation + ".json";
    const std::string samples_text = json::pretty(raw_samples_document(m, r.invocation)) + "\n";
    write_file(dir / samples_name, samples_text);

    RunRecord record;
    record.name = kebab("test-" + r.implementation + "-" + r.invocation);
    record.title = r.implementation;
    record.implementation_digest = manifest_digest(implementation);
    record.workload_digest = manifest_digest(c.workload);
    record.protocol_digest = manifest_digest(c.protocol);
    record.environment_digest = manifest_digest(c.environment);
    record.comparator = "fp64_oracle_rel_l2";
    record.latency_ns = stats::summarize(r.ns);
    record.raw_samples_uri = samples_name;
    record.raw_samples_digest = sha256_digest(samples_text);
    record.observed_at = "2026-01-02T03:04:05.678Z";
    record.labels.set("implementation", r.implementation);
    json::Value run = run_manifest(record);
    spec_of(run).set("status", r.status);
    if (!r.raw_samples) {
      spec_of(run).find("timing")->as_object().erase("rawSamples");
      std::filesystem::remove(dir / samples_name);
    }
    write_manifest(dir / ("run." + r.implementation + ".json"), run);
  }
}

// Low-noise samples around `median_ns` (deterministic from `seed`).
inline std::vector<double> quiet_samples(double median_ns, std::uint64_t seed, std::size_t n = 40,
                                         double noise = 0.002) {
  Normal normal(seed);
  return noisy_series(n, median_ns, noise, normal);
}

} // namespace kibench::test
