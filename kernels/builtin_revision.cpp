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
  f.operation_digest = c.operation->digest();
  f.language = language;
  f.source_path = c.source_path;
  f.symbol = c.symbol;
  f.interface = "kibench_implementation";
  f.architectures = {std::string(architecture)};
  f.dtypes = {c.operation->float_type() == FloatType::fp32 ? "fp32" : "bf16"};
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

RevisionFacts revision_on(RevisionFacts facts, OperationKind kind) {
  if (facts.operation_digest == kind->digest()) return facts;
  facts.operation_digest = kind->digest();
  facts.title += kind->shared_code_title();
  facts.description += kind->shared_code_description();
  return facts;
}

RevisionFacts host_revision(const BuiltinCallable &callable) {
  return builtin_revision(callable, "cpp", host_architecture());
}

RevisionFacts cuda_revision(const BuiltinCallable &callable) {
  return builtin_revision(callable, "cuda", kCompiledCudaArchitecture);
}

} // namespace kibench
