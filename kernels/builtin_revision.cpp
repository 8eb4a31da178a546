#include "kernels/builtin_revision.hpp"

#include "lib/implementation/build_source.hpp"

namespace kibench {

namespace {

// The instruction set the host code was compiled for, in the schema's
// identifier form.
constexpr std::string_view host_architecture() {
#if defined(__x86_64__) || defined(_M_X64)
  return "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "aarch64";
#else
  return "unknown";
#endif
}

RevisionFacts builtin_revision(const BuiltinCallable &c, std::string_view language,
                               std::string_view architecture) {
  RevisionFacts f;
  f.name = "kibench-" + std::string(c.name);
  f.title = c.title;
  f.description = c.description;
  f.operation_digest = operation_digest(c.operation);
  f.language = language;
  f.source_path = c.source_path;
  f.symbol = c.symbol;
  f.interface = "kibench_implementation";
  f.architectures = {std::string(architecture)};
  f.dtypes = {c.operation == OperationKind::jsd ? "fp32" : "bf16"};
  f.layouts = {"row_major"};
  f.licence = std::string(kKibenchLicence);
  const BuildSource &source = build_source();
  f.source = source.revision;
  // Not identity (the tree digest is): a reader's hint that the commit
  // alone does not reproduce this build.
  if (source.dirty) f.labels["source_tree"] = "differs from its commit";
  return f;
}

} // namespace

std::string_view operation_digest(OperationKind kind) {
  switch (kind) {
  case OperationKind::jsd:
    return kJsdOperationDigest;
  case OperationKind::fused_linear_jsd:
    return kFusedLinearJsdOperationDigest;
  case OperationKind::distill_jsd_loss:
    break;
  }
  return kDistillJsdLossOperationDigest;
}

RevisionFacts as_fused_linear_jsd(RevisionFacts distill) {
  distill.operation_digest = kFusedLinearJsdOperationDigest;
  distill.title += " (fused_linear_jsd)";
  distill.description += " On fused_linear_jsd: the same code with the hard loss's weight 0 and the student "
                         "as wide as the teacher.";
  return distill;
}

RevisionFacts host_revision(const BuiltinCallable &callable) {
  return builtin_revision(callable, "cpp", host_architecture());
}

RevisionFacts cuda_revision(const BuiltinCallable &callable) {
  return builtin_revision(callable, "cuda", kCompiledCudaArchitecture);
}

} // namespace kibench
