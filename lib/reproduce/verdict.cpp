#include "lib/reproduce/verdict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "lib/compare/environment_drift.hpp"
#include "lib/compare/pair_comparison.hpp"
#include "lib/compare/protocol_differences.hpp"
#include "lib/enum_names.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/path.hpp"

namespace kibench::reproduce {
namespace {

// Lowercase, each run of spaces, '-' and '_' one space: "NVIDIA
// A100-SXM4-80GB" (nvidia-smi) and "NVIDIA A100 SXM4-80GB" (product and form
// factor) are one name.
std::string lowercase_words(std::string_view text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// "NVIDIA H100 80GB HBM3 (sm_90); driver 580.159.04; CUDA 13.0; Ubuntu 24.04"
std::string environment_summary(const json::Value &environment) {
  std::string out = sku_of(environment);
  if (const std::string arch = json::string_at(environment, "spec.hardware.architecture"); !arch.empty())
    out += fmt::format(" ({})", arch);
  for (const auto &[field, shown] :
       {std::pair{"spec.software.driver", "driver "}, std::pair{"spec.software.cudaToolkit", "CUDA "},
        std::pair{"spec.software.operatingSystem", ""}}) {
    if (const std::string value = json::string_at(environment, field); !value.empty())
      out += fmt::format("; {}{}", shown, value);
  }
  return out;
}

// Percent with one decimal, rounded up, so that a stated bound is never
// tighter than the evidence: 0.01234 -> "1.3".
std::string percent_up(double fraction) {
  return fmt::format("{:.1f}", std::ceil(fraction * 1000.0 - 1e-9) / 10.0);
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}", fraction * 100.0);
}

std::string ms(double ns) {
  return fmt::format("{:.4g} ms", ns / 1e6);
}

std::vector<compare::FieldDifference> absent_difference(std::string_view what, std::string_view field,
                                                        const OriginalRun &original, std::string_view here) {
  const std::string digest = json::string_at(original.run, field);
  return {compare::FieldDifference{
      std::string(what),
      fmt::format("not in the record ({} {})", field, digest.empty() ? std::string("missing") : digest),
      std::string(here), false}};
}

Differences differences_of(const OriginalRun &original, const compare::ComparedRun *run,
                           const HereRun &here) {
  Differences d;
  if (run == nullptr) return d;
  if (original.environment) {
    for (auto &difference :
         compare::environment_differences(original.environment->manifest, run->environment)) {
      auto &into = difference.field.starts_with("software") ? d.software : d.environment;
      into.push_back(std::move(difference));
    }
  } else {
    d.environment =
        absent_difference("environment", "spec.environmentDigest", original, run->environment_name);
  }
  if (original.protocol) {
    d.protocol = compare::protocol_differences(original.protocol->manifest, run->protocol);
  } else {
    d.protocol = absent_difference("protocol", "spec.protocolDigest", original, run->protocol_name);
  }
  if (original.implementation) {
    const json::Value *a = original.implementation->manifest.find("spec");
    const json::Value *b = here.implementation.find("spec");
    if (a && b) d.implementation = compare::leaf_differences(*a, *b, {}, "implementation");
  } else {
    d.implementation = absent_difference("implementation", "spec.implementationDigest", original,
                                         json::string_at(here.implementation, "metadata.name"));
  }
  if (original.workload) {
    const json::Value *a = original.workload->manifest.find("spec");
    const json::Value *b = here.workload.find("spec");
    if (a && b) d.workload = compare::leaf_differences(*a, *b, {}, "workload");
  } else {
    // A record holding only the digest: it is the run here's case reduced
    // (resolve.hpp), so only what the reduction drops differs.
    d.workload = {compare::FieldDifference{
        "workload",
        fmt::format("{} (its WorkloadCase is not in the record)",
                    json::string_at(original.run, "spec.workloadDigest")),
        fmt::format("{}, generated", json::string_at(here.workload, "metadata.name")), false}};
  }
  return d;
}

json::Value differences_json(const std::vector<compare::FieldDifference> &list) {
  json::Array out;
  for (const auto &d : list) {
    json::Object item{{"field", d.field}, {"original", d.first}, {"here", d.second}};
    if (d.within_drift_rule) item.set("withinDriftRule", true);
    out.emplace_back(std::move(item));
  }
  return out;
}

json::Value optional_number(const std::optional<double> &value) {
  return value ? json::Value(*value) : json::Value(nullptr);
}

json::Value side_json(const VerdictSide &side) {
  json::Object out{
      {"record", side.label},
      {"name", side.name},
      {"digest", side.digest},
      {"status", side.status},
      {"medianNs", side.median_ns ? json::Value(std::round(*side.median_ns)) : json::Value(nullptr)},
      {"rawSamples", side.samples}};
  if (side.samples == 0) out.set("rawSamplesMissing", side.raw_missing);
  out.set("sku", side.sku);
  out.set("environment", side.environment_summary);
  return out;
}

} // namespace

std::string_view to_string(AttestationType type) {
  // KernelIndex's attestation types (its request schema's enum).
  static constexpr EnumName<AttestationType> kNames[] = {
      {AttestationType::reproduced, "reproduced"},
      {AttestationType::could_not_reproduce, "could_not_reproduce"},
      {AttestationType::environment_note, "environment_note"},
      {AttestationType::regression_observed, "regression_observed"}};
  return name_in(kNames, type, "environment_note");
}

std::string sku_of(const json::Value &environment) {
  std::string out = json::string_at(environment, "spec.hardware.product");
  if (out.empty()) return out;
  if (const std::string form = json::string_at(environment, "spec.hardware.formFactor"); !form.empty())
    out += " " + form;
  return out;
}

Verdict make_verdict(const OriginalRun &original, const ResolvedRun &resolved, const HereRun &here,
                     double tolerance, const stats::BootstrapSettings &bootstrap) {
  Verdict v;
  v.tolerance = tolerance;
  v.implementation = resolved.implementation;
  v.implementation_from = resolved.implementation_from;
  v.workload = resolved.workload.name;
  v.workload_from = resolved.workload_from;
  v.pass = std::string(to_string(resolved.pass));
  v.pass_from = resolved.pass_from;
  v.run_directory = here.run_directory;

  v.original.label = original.label;
  v.original.name = original.name;
  v.original.digest = original.digest;
  v.original.status = json::string_at(original.run, "spec.status");
  v.original.median_ns = original.median_ns;
  v.original.samples = original.raw ? original.raw->samples.size() : 0;
  v.original.raw_missing = original.raw_missing;
  if (original.environment) {
    // A curated environment's key is the GPU's name as nvidia-smi gives it,
    // as kibench's own environments name it.
    v.original.sku = original.environment->curated_key.empty() ? sku_of(original.environment->manifest)
                                                               : original.environment->curated_key;
    v.original.environment_summary = environment_summary(original.environment->manifest);
  }

  const compare::ComparedRun *run = here.run;
  if (run != nullptr) {
    v.here.label = run->label;
    v.here.name = run->name;
    v.here.digest = run->digest;
    v.here.status = std::string(to_string(run->status));
    v.here.median_ns = run->median_ns;
    v.here.samples = run->raw ? run->raw->samples.size() : 0;
    v.here.raw_missing = run->raw_missing;
    v.here.sku = sku_of(run->environment);
    v.here.environment_summary = environment_summary(run->environment);
  }
  v.differences = differences_of(original, run, here);

  // The environments: the same SKU of the same vendor.
  const auto vendor = [](const json::Value *env) {
    return env ? lowercase_words(json::string_at(*env, "spec.hardware.vendor")) : std::string();
  };
  if (!original.environment) {
    v.environment_note = "the record gives no ExecutionEnvironment";
  } else if (run == nullptr) {
    v.environment_note = "the run here has no environment";
  } else if (v.original.sku.empty()) {
    v.environment_note = "the record's environment names no product";
  } else {
    v.equivalent_environment = lowercase_words(v.original.sku) == lowercase_words(v.here.sku) &&
                               vendor(&original.environment->manifest) == vendor(&run->environment);
    v.environment_note = v.equivalent_environment ? fmt::format("the same SKU: {}", v.here.sku)
                                                  : fmt::format("another SKU: {} here, {} in the record",
                                                                v.here.sku, v.original.sku);
  }

  // The failure that leaves nothing to compare, or the comparison.
  if (run == nullptr) {
    v.failure = here.failure.empty() ? std::string("it did not run here") : here.failure;
  } else if (!here.failure.empty()) {
    v.failure = fmt::format("it failed here ({}): {}", v.here.status, here.failure);
  } else if (run->status != RunStatus::passed) {
    v.failure = fmt::format("it did not pass its check here ({})", v.here.status);
  } else if (!run->median_ns) {
    v.failure = "it has no median here";
  } else if (!original.median_ns) {
    v.failure = "the record reports no median";
  }
  if (run != nullptr && run->median_ns && original.median_ns) {
    v.ratio = *run->median_ns / *original.median_ns;
    if (original.raw && run->raw && original.raw->samples.size() >= compare::kMinimumSamples &&
        run->raw->samples.size() >= compare::kMinimumSamples) {
      const auto a = original.raw->nanoseconds(), b = run->raw->nanoseconds();
      // speedup = median(original) / median(here): the ratio is its inverse.
      const stats::MedianComparison m = stats::bootstrap_independent(a, b, bootstrap);
      v.ratio_interval = stats::Interval{1.0 / m.speedup.estimate, 1.0 / m.speedup.high, 1.0 / m.speedup.low};
      v.interval_note =
          fmt::format("{:g} % percentile bootstrap of the ratio of medians, the two runs' samples "
                      "resampled independently ({} and {}), {} resamples, seed {}",
                      bootstrap.confidence * 100, a.size(), b.size(), bootstrap.resamples, bootstrap.seed);
    } else if (!original.raw) {
      // raw_missing says why ("no raw samples (spec.timing.rawSamples
      // absent): ...", "raw samples at <uri> are not a local file: ...").
      v.interval_note = fmt::format("no interval, the record has none to resample: {}", original.raw_missing);
    } else if (!run->raw) {
      v.interval_note = fmt::format("no interval: the run here has no raw samples ({})", run->raw_missing);
    } else {
      v.interval_note =
          fmt::format("no interval: fewer than {} raw samples on a side ({} in the record, {} here)",
                      compare::kMinimumSamples, original.raw->samples.size(), run->raw->samples.size());
    }
    v.deviation = v.ratio_interval ? std::max(std::fabs(v.ratio_interval->low - 1.0),
                                              std::fabs(v.ratio_interval->high - 1.0))
                                   : std::fabs(*v.ratio - 1.0);
  }

  if (!v.equivalent_environment) {
    v.type = AttestationType::environment_note;
    v.statement = "measured on another environment";
    if (!v.failure.empty())
      v.statement += fmt::format(": {}", v.failure);
    else if (v.ratio)
      v.statement += fmt::format(": {:.3f}x the original's median", *v.ratio);
  } else if (!v.failure.empty() || !v.deviation) {
    v.type = AttestationType::could_not_reproduce;
    v.statement =
        fmt::format("could not reproduce: {}", v.failure.empty() ? "nothing to compare" : v.failure);
  } else if (*v.deviation <= tolerance) {
    v.type = AttestationType::reproduced;
    v.statement = fmt::format("reproduced within {} %", percent_up(*v.deviation));
  } else {
    v.type = AttestationType::could_not_reproduce;
    v.statement = fmt::format("not reproduced: up to {} % from the original, beyond the {} % tolerance",
                              percent_up(*v.deviation), percent(tolerance));
  }
  return v;
}

json::Value verdict_json(const Verdict &v) {
  json::Object ratio{{"estimate", optional_number(v.ratio)}};
  if (v.ratio_interval) {
    ratio.set("low", v.ratio_interval->low);
    ratio.set("high", v.ratio_interval->high);
  } else {
    ratio.set("low", nullptr);
    ratio.set("high", nullptr);
  }
  ratio.set("interval", v.interval_note);
  json::Object differences{{"environment", differences_json(v.differences.environment)},
                           {"software", differences_json(v.differences.software)},
                           {"protocol", differences_json(v.differences.protocol)},
                           {"implementation", differences_json(v.differences.implementation)},
                           {"workload", differences_json(v.differences.workload)}};
  json::Object out{
      {"format", "kibench.dev/reproduce-verdict/v1"},
      {"rule", v.rule},
      {"type", to_string(v.type)},
      {"statement", v.statement},
      {"tolerance", v.tolerance},
      {"deviation", optional_number(v.deviation)},
      {"ratio", ratio},
      {"equivalentEnvironment", v.equivalent_environment},
      {"environmentNote", v.environment_note},
      {"original", side_json(v.original)},
      {"here", side_json(v.here)},
      {"runDirectory", v.run_directory},
      {"resolved", json::Object{{"implementation", v.implementation},
                                {"implementationFrom", v.implementation_from},
                                {"workload", v.workload},
                                {"workloadFrom", v.workload_from},
                                {"pass", v.pass},
                                {"passFrom", v.pass_from}}},
      {"differences", differences},
      {"attestation", json::Object{{"idOrDigest", v.original.digest},
                                   {"request", fmt::format("POST /runs/{}/attestations", v.original.digest)},
                                   {"body", "attestation.json"}}},
  };
  if (!v.failure.empty()) out.set("failure", v.failure);
  return out;
}

std::string verdict_text(const Verdict &v) {
  std::string out = fmt::format("{}: {}\n", v.original.label, v.statement);
  out += fmt::format("  reproduced as {} on {} ({} pass)\n", v.implementation, v.workload, v.pass);
  if (v.ratio) {
    out += fmt::format("  median {} here vs {} in the record: ratio {:.3f}", ms(*v.here.median_ns),
                       ms(*v.original.median_ns), *v.ratio);
    if (v.ratio_interval)
      out += fmt::format(" [95 % CI {:.3f}, {:.3f}]", v.ratio_interval->low, v.ratio_interval->high);
    out += "\n";
  }
  out += fmt::format("  {}\n", v.interval_note.empty() ? v.failure : v.interval_note);
  out += fmt::format("  environment: {}\n", v.environment_note);
  const auto line = [&](std::string_view what, const std::vector<compare::FieldDifference> &list) {
    if (list.empty()) return;
    // The first few; verdict.json has them all.
    constexpr std::size_t shown = 3;
    const std::vector<compare::FieldDifference> first(
        list.begin(), list.begin() + static_cast<std::ptrdiff_t>(std::min(shown, list.size())));
    out += fmt::format("  {} differs: {}", what, compare::join(first));
    if (list.size() > shown) out += fmt::format(" and {} more (verdict.json)", list.size() - shown);
    out += "\n";
  };
  line("environment", v.differences.environment);
  line("software", v.differences.software);
  line("protocol", v.differences.protocol);
  line("implementation", v.differences.implementation);
  line("workload", v.differences.workload);
  out +=
      fmt::format("  attestation ({}): POST /runs/{}/attestations\n", to_string(v.type), v.original.digest);
  return out;
}

} // namespace kibench::reproduce
