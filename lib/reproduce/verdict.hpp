// What a reproduction found, against the record it reproduces: the ratio of
// the medians (here / original) with a bootstrap interval where both have
// raw samples, every difference of environment, software, protocol,
// implementation and workload field by field, and the attestation type the
// rule gives (docs/reproduce.md):
//
//   deviation  D = max(|low - 1|, |high - 1|) of the ratio's 95 % interval,
//              or |ratio - 1| where there is no interval (a record without
//              raw samples): the largest departure the evidence allows
//   equivalent environment (the same GPU SKU: vendor, and product with form
//   factor or the curated gpu_name; on the CPU path, the same processor):
//       D <= tolerance                   reproduced ("reproduced within D %")
//       D >  tolerance, or the run here
//       failed or did not pass its check could_not_reproduce
//   another environment, or one the
//   record does not give                 environment_note ("measured on
//                                        another environment"), never a claim
//   regression_observed is not issued: a regression is a claim about two
//   revisions, which `kibench compare --fail-if-slower` gates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/compare/compared_run.hpp"
#include "lib/compare/field_difference.hpp"
#include "lib/json/value.hpp"
#include "lib/reproduce/original_run.hpp"
#include "lib/reproduce/resolve.hpp"
#include "lib/stats/bootstrap.hpp"

namespace kibench::reproduce {

inline constexpr std::string_view kReproduceRule = "kibench-reproduce-v1";
inline constexpr double kDefaultTolerance = 0.05;

// KernelIndex's attestation types (POST /runs/{idOrDigest}/attestations).
enum class AttestationType { reproduced, could_not_reproduce, environment_note, regression_observed };
std::string_view to_string(AttestationType type);

// One side of the comparison: the original record or the run here.
struct VerdictSide {
  std::string label; // where it was read
  std::string name;  // metadata.name
  std::string digest;
  std::string status; // spec.status
  std::optional<double> median_ns;
  std::size_t samples = 0; // raw samples (0: none)
  std::string raw_missing; // why there are none
  std::string sku;         // "NVIDIA H100 80GB HBM3"; empty where the environment is not given
  std::string environment_summary;
};

struct Differences {
  std::vector<compare::FieldDifference> environment, software, protocol, implementation, workload;
  [[nodiscard]] std::size_t count() const {
    return environment.size() + software.size() + protocol.size() + implementation.size() + workload.size();
  }
};

struct Verdict {
  std::string rule{kReproduceRule};
  double tolerance = kDefaultTolerance;
  VerdictSide original, here;
  std::string implementation, implementation_from, workload, workload_from, pass, pass_from;
  std::string run_directory;   // the run here, relative to the reproduction's directory
  std::string failure;         // why the run here has no usable median (empty when it has one)
  std::optional<double> ratio; // median here / median of the original
  std::optional<stats::Interval> ratio_interval;
  std::string interval_note; // how the interval was computed, or why there is none
  bool equivalent_environment = false;
  std::string environment_note; // why the environments are (not) equivalent
  std::optional<double> deviation;
  AttestationType type = AttestationType::environment_note;
  std::string statement; // "reproduced within 1.6 %", "measured on another environment", ...
  Differences differences;
};

struct HereRun {
  const compare::ComparedRun *run = nullptr; // nullptr when it did not run
  std::string failure;                       // the lane's failure, when it failed
  json::Value implementation;                // its ImplementationRevision
  json::Value workload;                      // its WorkloadCase
  std::string run_directory;
};

Verdict make_verdict(const OriginalRun &original, const ResolvedRun &resolved, const HereRun &here,
                     double tolerance, const stats::BootstrapSettings &bootstrap);

// The GPU (or processor) SKU an ExecutionEnvironment names: vendor, product
// and form factor; empty when it names no product.
std::string sku_of(const json::Value &environment);

// verdict.json: the verdict, and where its attestation is posted.
json::Value verdict_json(const Verdict &verdict);

// The short summary printed after a reproduction.
std::string verdict_text(const Verdict &verdict);

} // namespace kibench::reproduce
