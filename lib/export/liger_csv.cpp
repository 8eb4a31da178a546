#include "lib/export/liger_csv.hpp"

#include <cmath>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "lib/compare/protocol_terms.hpp"
#include "lib/compare/run_loader.hpp"
#include "lib/error.hpp"
#include "lib/export/csv_writer.hpp"
#include "lib/importers/liger/curated_tables.hpp"
#include "lib/importers/liger/kernel_binding.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/path.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::exports {
namespace {

using json::member_at;
using json::string_at;

// The upstream source `kibench import liger` writes into sourceNative.
constexpr std::string_view kLigerSource = "liger-kernel-bench";

const std::vector<std::string> kColumns = {"kernel_name", "kernel_provider", "kernel_operation_mode",
                                           "metric_name", "metric_unit",     "x_name",
                                           "x_label",     "x_value",         "y_value_50",
                                           "y_value_20",  "y_value_80",      "extra_benchmark_config_str",
                                           "gpu_name",    "timestamp",       "liger_version"};

struct Skipped {
  std::string why;
};

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool imported_from_liger(const ExportedRun &r) {
  return string_at(r.run, "spec.sourceNative.source") == kLigerSource;
}

std::string kernel_of(const ExportedRun &r, const importers::liger::CuratedTables &curated) {
  for (const std::string_view kernel : importers::liger::kJsdFamily) {
    const auto *operation = curated.operation(kernel);
    if (operation != nullptr && operation->digest == r.compared.operation_digest) return std::string(kernel);
  }
  throw Skipped{fmt::format("its operation {} is none of Liger's benchmark kernels (jsd, fused_linear_jsd, "
                            "distill_jsd_loss)",
                            r.compared.operation_digest)};
}

// The timed pass: kibench's run label, an imported row's benchmark
// ("<kernel>/<mode>"), else kibench's protocol notes.
std::string mode_of(const ExportedRun &r) {
  std::string mode = string_at(r.run, "metadata.labels.pass");
  if (mode.empty() && imported_from_liger(r)) {
    const auto parts = split(string_at(r.run, "spec.sourceNative.benchmark"), '/');
    if (parts.size() == 2) mode = parts[1];
  }
  if (mode.empty()) {
    for (const auto &setting :
         compare::read_notes_settings(compare::comparability_notes(r.protocol)).settings) {
      if (setting.name == "pass") mode = setting.value;
    }
  }
  if (mode != "full" && mode != "forward" && mode != "backward")
    throw Skipped{mode.empty() ? std::string("it states no timed pass (full, forward or backward)")
                               : fmt::format("its pass \"{}\" is not one of Liger's modes", mode)};
  return mode;
}

// An imported row's provider is the third part of its external id
// ("<kernel>/<mode>/<provider>/<gpu>/<case>/<time>").
std::string provider_of(const ExportedRun &r) {
  if (imported_from_liger(r)) {
    const auto parts = split(string_at(r.run, "spec.sourceNative.externalId"), '/');
    if (parts.size() >= 3 && !parts[2].empty()) return parts[2];
  }
  return r.compared.implementation;
}

std::string gpu_name_of(const ExportedRun &r, const importers::liger::CuratedTables &curated) {
  if (std::string curated_name = curated.gpu_name_of(r.compared.environment_digest); !curated_name.empty())
    return curated_name;
  std::string product = string_at(r.environment, "spec.hardware.product");
  if (product.empty()) throw Skipped{"its environment names no hardware.product"};
  return product;
}

std::string liger_version_of(const ExportedRun &r) {
  if (const std::string version = string_at(r.run, "metadata.labels.liger_version"); !version.empty())
    return version;
  const json::Value *variants = member_at(r.implementation, "spec.buildVariants");
  if (variants != nullptr && variants->is_array()) {
    for (const json::Value &variant : variants->as_array()) {
      const std::string package = string_at(variant, "install.package");
      if (package == "liger-kernel" || package == "liger_kernel")
        return string_at(variant, "install.version");
    }
  }
  return {};
}

std::string ms(double ns) {
  return json::format_number(ns / 1e6);
}

std::optional<double> latency_measurement(const json::Value &run, std::string_view statistic) {
  const json::Value *list = member_at(run, "spec.measurements");
  if (list == nullptr || !list->is_array()) return std::nullopt;
  for (const json::Value &m : list->as_array()) {
    if (string_at(m, "metric") == "latency" && string_at(m, "statistic") == statistic &&
        string_at(m, "unit") == "ns") {
      if (const json::Value *value = m.find("value"); value != nullptr && value->is_number())
        return value->as_number();
    }
  }
  return std::nullopt;
}

std::string torch_dtype(const std::string &dtype) {
  if (dtype == "bf16") return "torch.bfloat16";
  if (dtype == "fp16") return "torch.float16";
  if (dtype == "fp32") return "torch.float32";
  throw Skipped{fmt::format("its dtype \"{}\" has no torch name", dtype)};
}

const json::Value &axis(const ExportedRun &r, std::string_view name) {
  const json::Value *value = member_at(r.workload, fmt::format("spec.axes.{}", name));
  if (value == nullptr || !value->is_number())
    throw Skipped{fmt::format("its workload has no axis {}", name)};
  return *value;
}

// The floating-point inputs' dtype.
std::string float_dtype(const ExportedRun &r) {
  const json::Value *tensors = member_at(r.workload, "spec.tensors");
  if (tensors != nullptr && tensors->is_object()) {
    for (const auto &[name, tensor] : tensors->as_object()) {
      const std::string dtype = string_at(tensor, "dtype");
      if (!dtype.empty() && !dtype.starts_with("int") && !dtype.starts_with("uint")) return dtype;
    }
  }
  throw Skipped{"its workload has no floating-point input"};
}

bool has_bias(const ExportedRun &r) {
  const json::Value *tensors = member_at(r.workload, "spec.tensors");
  if (tensors == nullptr || !tensors->is_object()) return false;
  for (const auto &[name, tensor] : tensors->as_object()) {
    if (name.find("bias") != std::string::npos) return true;
  }
  return false;
}

// Liger's scripts write the config with Python's json.dumps: ", " and ": ".
std::string config_text(const std::vector<std::pair<std::string, json::Value>> &members) {
  std::vector<std::string> parts;
  for (const auto &[key, value] : members)
    parts.push_back(fmt::format("{}: {}", json::canonical(json::Value(key)), json::canonical(value)));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

std::string config_of(const ExportedRun &r, const std::string &kernel, const std::string &mode) {
  std::vector<std::pair<std::string, json::Value>> members;
  const auto scalar = [&](std::string_view name) -> std::optional<json::Value> {
    const json::Value *value = member_at(r.workload, fmt::format("spec.scalars.{}.value", name));
    return value != nullptr ? std::optional<json::Value>(*value) : std::nullopt;
  };
  if (kernel == "jsd") {
    members = {{"vocab_size", axis(r, "vocab")}, {"mode", mode}, {"dtype", torch_dtype(float_dtype(r))}};
  } else {
    members = {{"H", axis(r, "hidden")},
               {"V", axis(r, "vocab")},
               {"mode", mode},
               {"dtype", torch_dtype(float_dtype(r))}};
  }
  if (kernel == "distill_jsd_loss") {
    members.emplace_back("bias", has_bias(r));
    for (const char *name : {"weight_hard_loss", "weight_soft_loss", "ignore_index"}) {
      if (const auto value = scalar(name)) members.emplace_back(name, *value);
    }
  }
  // Not in Liger's config: kibench varies them between workloads, so they
  // keep such rows apart.
  for (const char *name : {"beta", "temperature"}) {
    if (kernel == "fused_linear_jsd" && std::string_view(name) == "beta") continue; // fixed by its script
    if (const auto value = scalar(name)) members.emplace_back(name, *value);
  }
  return config_text(members);
}

// "2024-12-03T08:00:25.000Z" → "2024-12-03 08:00:25".
std::string csv_timestamp(const std::string &observed_at) {
  if (observed_at.size() < 19 || observed_at[10] != 'T')
    throw Skipped{fmt::format("its observedAt \"{}\" is not an RFC 3339 UTC time", observed_at)};
  return observed_at.substr(0, 10) + " " + observed_at.substr(11, 8);
}

std::vector<std::string> row_of(const ExportedRun &r, const importers::liger::CuratedTables &curated) {
  if (r.compared.status != RunStatus::passed)
    throw Skipped{fmt::format("status {} (Liger's CSV has no status: only passed runs are rows)",
                              to_string(r.compared.status))};
  // The statistics of the raw samples where the run has them (as compare
  // ranks it; whole ns, as `kibench run` writes them), else those it reports.
  std::optional<double> median_ns = r.compared.median_ns;
  if (!median_ns) throw Skipped{"it has no median latency"};
  std::optional<double> p20 = latency_measurement(r.run, "p20");
  std::optional<double> p80 = latency_measurement(r.run, "p80");
  if (r.compared.raw && !r.compared.raw->samples.empty()) {
    const stats::Summary s = stats::summarize(r.compared.raw->nanoseconds());
    median_ns = std::round(s.median);
    p20 = std::round(s.p20);
    p80 = std::round(s.p80);
  }
  const std::string kernel = kernel_of(r, curated);
  const std::string mode = mode_of(r);
  return {kernel,
          provider_of(r),
          mode,
          "speed",
          "ms",
          "BT",
          "B x T",
          json::canonical(axis(r, "tokens")),
          ms(*median_ns),
          p20 ? ms(*p20) : std::string{},
          p80 ? ms(*p80) : std::string{},
          config_of(r, kernel, mode),
          gpu_name_of(r, curated),
          csv_timestamp(string_at(r.run, "spec.observedAt")),
          liger_version_of(r)};
}

} // namespace

LigerCsv render_liger_csv(const std::vector<ExportedRun> &runs,
                          const std::filesystem::path &curated_directory) {
  const auto curated = importers::liger::CuratedTables::load(curated_directory, importers::liger::kJsdFamily);
  LigerCsv out;
  out.text = csv_record(kColumns);
  for (const ExportedRun &r : runs) {
    try {
      out.text += csv_record(row_of(r, curated));
      ++out.rows;
    } catch (const Skipped &skipped) {
      out.notes.push_back(fmt::format("{}: not exported: {}", r.compared.id, skipped.why));
    }
  }
  if (out.rows == 0)
    throw InputError(
        fmt::format("liger-csv: no run can be a row of Liger's CSV ({})", fmt::join(out.notes, "; ")));
  return out;
}

} // namespace kibench::exports
