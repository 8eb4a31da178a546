#include "kernels/registry.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "kernels/cpu/cpu_implementations.hpp"
#include "kernels/lm_head/floors/cublas_floor.hpp"
#include "kernels/lm_head/floors/wgmma_floor_implementation.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/jsd/jsd_implementations.hpp"
#include "kernels/operation_switch.hpp"
#include "kernels/lm_head/oracle/oracle_fp64.hpp"
#include "kernels/lm_head/reference/reference.hpp"
#include "kernels/lm_head/vocab_parallel/emulated_implementation.hpp"
#include "kernels/lm_head/vocab_parallel/multi_gpu_implementation.hpp"
#include "lib/operations/registry.hpp"

namespace kibench {
namespace {

// `name` for all three operations: distill_jsd_loss's implementation (which
// also computes fused_linear_jsd, its soft term alone) and jsd's.
template <typename Distill>
std::unique_ptr<Implementation> family(std::string name, Distill distill,
                                       std::unique_ptr<Implementation> (*jsd)()) {
  std::map<OperationKind, std::unique_ptr<Implementation>> parts;
  parts.emplace(operation_named("distill_jsd_loss"), distill());
  parts.emplace(operation_named("fused_linear_jsd"), distill());
  parts.emplace(operation_named("jsd"), jsd());
  return make_operation_switch(std::move(name), std::move(parts));
}

} // namespace

// Factories, each defined beside its implementation.

namespace {

// `fused-vp<n>-emulated` for the shard counts a multi-GPU host has.
RegisteredImplementation vocab_parallel_emulation_entry(int shards) {
  return {
      vocab_parallel_emulation_name(shards),
      fmt::format("fused with the LM heads cut into {} vocabulary shards run one after another on one GPU, "
                  "per-row statistics and grad x combined by all-reduces (the vocabulary-parallel data "
                  "flow, not its timing)",
                  shards),
      true, false,
      [shards] {
        return make_vocab_parallel_emulated({.name = vocab_parallel_emulation_name(shards), .shards = shards});
      },
      {}, /*is_diagnostic=*/true};
}

} // namespace

const std::vector<RegisteredImplementation> &implementation_registry() {
  static const std::vector<RegisteredImplementation> registry = {
      {"cpu-fp64", "fp64 oracle on the CPU (loss and student gradients; small cases)", false, true,
       make_cpu_fp64},
      {"cpu-reference", "torch-equivalent chain on the CPU: bf16 GEMMs, fp32 loss ops, bf16 grads", false,
       false, make_cpu_reference},
      {"fused",
       "chunked GEMMs + one cluster-per-row loss/gradient kernel, never holding [T, V]; the logit GEMMs "
       "kibench's own with row statistics where they pay, else cuBLASLt's; jsd: one streaming row kernel",
       true, false, [] { return family("fused", [] { return make_fused(); }, make_jsd_fused); }},
      {"fused-rowstats",
       "fused with kibench's own logit GEMM writing row statistics for the row kernel wherever it can run "
       "(tau = 1, no bias), not only where it pays",
       true, false,
       [] {
         return make_fused(FusedOptions{.name = "fused-rowstats", .logit_statistics = LogitStatistics::on});
       }},
      {"fused-cublaslt", "fused with cuBLASLt's logit GEMMs everywhere (the row kernel's own statistics)",
       true, false,
       [] {
         return make_fused(FusedOptions{.name = "fused-cublaslt", .logit_statistics = LogitStatistics::off});
       }},
      {"fused-lean",
       "fused within a 1 GiB workspace budget: more, shorter chunks (the memory/speed trade-off)", true,
       false,
       [] {
         return make_fused(
             FusedOptions{.name = "fused-lean", .workspace_budget = gpu::fused::kLeanWorkspaceBudget});
       }},
      {"fused-fp8-teacher",
       "fused with the teacher logit GEMM in FP8 e4m3 (cuBLASLt, fast accumulation, a scale per token row and "
       "per vocabulary row, W_t's e4m3 copy made when prepared), checked against the same oracle and policy",
       true, false,
       [] {
         return make_fused(FusedOptions{.name = "fused-fp8-teacher",
                                        .logit_statistics = LogitStatistics::off,
                                        .teacher_precision = TeacherPrecision::fp8_e4m3,
                                        .fp8_fast_accumulation = true});
       }},
      {kVocabParallelName,
       "fused with the LM heads cut into one vocabulary shard per GPU of the run (--gpus n), per-row "
       "statistics and grad x combined by NCCL all-reduces; timed as the slowest GPU, after a barrier",
       true, false, [] { return make_vocab_parallel(); },
       [](int gpus) {
         return make_vocab_parallel({.name = kVocabParallelName, .gpus = gpus});
       }},
      {kVocabParallelComputeOnlyName,
       "fused-vocab-parallel without its all-reduces: every GPU's own work only (no loss, never checked); "
       "beside fused-vocab-parallel it gives the collectives' share",
       true, false, [] { return make_vocab_parallel({.name = kVocabParallelComputeOnlyName, .collectives = false}); },
       [](int gpus) {
         return make_vocab_parallel({.name = kVocabParallelComputeOnlyName, .gpus = gpus, .collectives = false});
       },
       /*is_diagnostic=*/true},
      vocab_parallel_emulation_entry(2),
      vocab_parallel_emulation_entry(4),
      vocab_parallel_emulation_entry(8),
      {"reference", "torch-equivalent chain on the GPU: full [T, V] fp32 intermediates, one kernel per op",
       true, false, [] { return family("reference", make_reference, make_jsd_reference); }},
      {"cublas-floor", "the four bf16 GEMMs alone (z_s, z_t, grad x_s, grad W_s): the same-run time floor",
       true, false, make_cublas_floor},
      {"wgmma-floor",
       "the same GEMM FLOPs as wgmma on shared-memory operands, no memory traffic: what no GEMM can beat "
       "here",
       true, false, make_wgmma_floor},
      {"copy-floor",
       "jsd's bytes (read both [T, V] inputs, write one) moved by a vectorized copy: the same-run bandwidth "
       "floor",
       true, false, make_copy_floor},
      {"oracle-fp64", "fp64 oracle on the GPU (token-chunked fp64 GEMMs and row math; big cases)", true, true,
       [] { return family("oracle-fp64", make_oracle_fp64, make_jsd_oracle_fp64); }},
  };
  return registry;
}

const RegisteredImplementation *find_implementation(std::string_view name) {
  const auto &all = implementation_registry();
  auto it = std::find_if(all.begin(), all.end(), [&](const auto &r) { return r.name == name; });
  return it == all.end() ? nullptr : &*it;
}

} // namespace kibench
