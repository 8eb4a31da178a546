#include "lib/importers/liger/imported_record.hpp"

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/importers/liger/benchmark_run.hpp"
#include "lib/importers/liger/kernel_binding.hpp"
#include "lib/importers/liger/naming.hpp"
#include "lib/importers/liger/skip_reason.hpp"
#include "lib/importers/liger/workload_case.hpp"

namespace kibench::importers::liger {
namespace {

std::string operation_title(const json::Value &operation) {
  const json::Value *metadata = operation.find("metadata");
  const json::Value *title = metadata ? metadata->find("title") : nullptr;
  return title != nullptr && title->is_string() ? title->as_string() : std::string();
}

} // namespace

ImportedRecord import_speed_row(const SpeedRow &row, const CuratedTables &tables,
                                const detail::OperationSignature &signature) {
  const CuratedManifest *operation = tables.operation(row.kernel);
  if (operation == nullptr)
    throw RowSkipped(SkipReason::other_kernel, fmt::format("no OperationSpec for kernel \"{}\"", row.kernel));
  const CuratedManifest *protocol = tables.protocol(row.mode);
  if (protocol == nullptr)
    throw RowSkipped(
        SkipReason::did_not_bind,
        fmt::format("kernel_operation_mode \"{}\" has no curated BenchmarkProtocol (forward, backward, full)",
                    row.mode));
  const CuratedManifest *implementation = tables.implementation(row.kernel, row.provider);
  const CuratedManifest *project = tables.project(row.provider);
  if (implementation == nullptr || project == nullptr)
    throw RowSkipped(SkipReason::unknown_provider,
                     fmt::format("unknown provider \"{}\" for {} (no curated {})", row.provider, row.kernel,
                                 implementation == nullptr ? "ImplementationRevision" : "SoftwareProject"));
  const CuratedManifest *environment = tables.environment(row.gpu_name);
  if (environment == nullptr)
    throw RowSkipped(SkipReason::unknown_gpu,
                     fmt::format("unknown GPU \"{}\" (no curated ExecutionEnvironment)", row.gpu_name));

  const BoundCase bound = bind_kernel_row(row.kernel, row.x_name, row.x_value, row.config);
  WorkloadCaseRecord workload = make_workload_case(*operation, signature, bound);
  const std::string workload_digest = manifest_digest(workload.manifest);

  const RunIdentity identity{row.kernel,   row.mode,          row.provider,
                             row.gpu_name, workload.case_key, row.timestamp.text()};
  const std::string title = operation_title(operation->manifest);
  BenchmarkRunFields fields{
      .name = run_name(identity),
      .title = fmt::format("{} · {} · {}", title.empty() ? row.kernel : title, row.provider, row.mode),
      .liger_version = row.liger_version,
      .implementation_digest = implementation->digest,
      .workload_digest = workload_digest,
      .protocol_digest = protocol->digest,
      .environment_digest = environment->digest,
      .observed_at = row.timestamp.observed_at(),
      .benchmark = fmt::format("{}/{}", row.kernel, row.mode),
      .external_id = external_id(identity),
      .ms = row.ms,
  };
  json::Value run = make_benchmark_run(fields);

  ImportedRecord record;
  record.line = row.line;
  record.name = fields.name;
  record.external_id = fields.external_id;
  record.run_digest = manifest_digest(run);
  record.comparison_key = comparison_key(ComparisonKeyParts{
      .operation = operation->digest,
      .workload = workload_digest,
      .protocol = protocol->digest,
      .environment = environment->digest,
      .correctness = not_asserted_correctness(),
  });
  record.files = {
      {"run.json", std::move(run)},
      {"workload.json", std::move(workload.manifest)},
      {"operation.json", operation->manifest},
      {"protocol.json", protocol->manifest},
      {"environment.json", environment->manifest},
      {"implementation.json", implementation->manifest},
      {"project.json", project->manifest},
  };
  return record;
}

} // namespace kibench::importers::liger
