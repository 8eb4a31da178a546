// The operation registry (lib/operations/): each operation registered once,
// found by name and by ABI code, the default the seed's; the facts each
// states (cost models, output shapes, the run table's line, fixed loss
// weights) are those the rest of kibench used to switch on.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>

#include "include/kibench/kibench_plugin.h"
#include "lib/operations/registry.hpp"
#include "lib/workload/workload.hpp"
#include "test/source_tree.hpp"

using namespace kibench;

namespace {

Workload load(const std::string &relative) {
  return load_workload(kibench::test::source_dir() / "workloads" / relative);
}

} // namespace

TEST_CASE("every operation is registered once, found by its name and its ABI code", "[operations]") {
  const auto &all = registered_operations();
  REQUIRE(all.size() == 3);
  CHECK(operation_names() == "distill_jsd_loss, jsd and fused_linear_jsd");
  std::set<std::string> names, digests;
  std::set<std::int32_t> codes;
  for (const OperationKind kind : all) {
    names.insert(std::string(kind.name()));
    digests.insert(std::string(kind->digest()));
    codes.insert(kind->abi_code());
    CHECK(find_operation_named(kind.name()) == kind);
    CHECK(find_operation_by_abi_code(kind->abi_code()) == kind);
    CHECK(to_string(kind) == kind.name());
  }
  CHECK(names.size() == all.size());
  CHECK(digests.size() == all.size());
  CHECK(codes.size() == all.size());
  // The ABI's codes never change.
  CHECK(operation_named("distill_jsd_loss")->abi_code() == KIBENCH_OPERATION_DISTILL_JSD_LOSS);
  CHECK(operation_named("jsd")->abi_code() == KIBENCH_OPERATION_JSD);
  CHECK(operation_named("fused_linear_jsd")->abi_code() == KIBENCH_OPERATION_FUSED_LINEAR_JSD);
  CHECK_FALSE(find_operation_named("cross_entropy"));
  CHECK_FALSE(find_operation_by_abi_code(99));
  CHECK_THROWS_AS(operation_named("cross_entropy"), std::logic_error);
}

TEST_CASE("the default operation is the seed's, and kinds order as registered", "[operations]") {
  CHECK(OperationKind() == operation_named("distill_jsd_loss"));
  CHECK(Workload{}.operation_kind == operation_named("distill_jsd_loss"));
  CHECK(operation_named("distill_jsd_loss") < operation_named("jsd"));
  CHECK(operation_named("jsd") < operation_named("fused_linear_jsd"));
  CHECK(operation_named("jsd") != operation_named("fused_linear_jsd"));
}

TEST_CASE("an implementation's positive set names registered operations only", "[operations]") {
  CHECK(computes_one_of(operation_named("jsd"), {"jsd"}));
  CHECK_FALSE(computes_one_of(operation_named("jsd"), {"distill_jsd_loss", "fused_linear_jsd"}));
  CHECK(computes_one_of(operation_named("fused_linear_jsd"), {"distill_jsd_loss", "fused_linear_jsd"}));
  // A misspelt name is the implementation's bug, not a silent "no".
  CHECK_THROWS_AS(computes_one_of(operation_named("jsd"), {"jsd", "fused_linear_jds"}), std::logic_error);
}

TEST_CASE("each operation's facts: cost models, shapes, the table line, fixed weights", "[operations]") {
  SECTION("distill_jsd_loss at the seed's shape") {
    const Workload w = load("seed-distill-jsd-h4096-t8192-v128256.json");
    REQUIRE(w.operation_kind == operation_named("distill_jsd_loss"));
    const double t = 8192, v = 128256, h = 4096, hs = 2048;
    CHECK(w.gemm_flops(false) == Approx(2 * t * v * hs + 2 * t * v * h));
    CHECK(w.gemm_flops(true) == Approx(2 * t * v * hs + 2 * t * v * h + 4 * t * v * hs));
    CHECK(w.minimum_bytes(true, true) == 0.0);
    CHECK(w.input_bytes() == static_cast<std::uint64_t>(2 * (t * hs + v * hs + t * h + v * h) + 8 * t));
    CHECK(w.operation_kind->grad_student_input_shape(w) == std::vector<std::int64_t>{8192, 2048});
    CHECK(w.operation_kind->has_lm_heads());
    CHECK(w.operation_kind->describe_shape(w).starts_with("T=8192 V=128256 H=4096 Hs=2048, β=0.5 τ="));
  }
  SECTION("jsd: bytes, not FLOPs, and one [T, V] gradient") {
    for (const auto &entry : list_workload_files(kibench::test::source_dir() / "workloads" / "jsd" / "small")) {
      const Workload w = load_workload(entry);
      REQUIRE(w.operation_kind == operation_named("jsd"));
      const double cells = static_cast<double>(w.tokens) * static_cast<double>(w.vocab);
      CHECK(w.gemm_flops(true) == 0.0);
      CHECK(w.minimum_bytes(true, true) == Approx(12 * cells));
      CHECK(w.minimum_bytes(true, false) == Approx(8 * cells));
      CHECK(w.minimum_bytes(false, true) == Approx(4 * cells));
      CHECK(w.input_bytes() == static_cast<std::uint64_t>(8 * cells + 8 * static_cast<double>(w.tokens)));
      CHECK(w.operation_kind->grad_student_input_shape(w) == std::vector<std::int64_t>{w.tokens, w.vocab});
      CHECK_FALSE(w.operation_kind->has_lm_heads());
      CHECK(w.dtype == FloatType::fp32);
      CHECK(w.hidden == 0);
      CHECK(w.operation_kind->describe_shape(w).starts_with("jsd: T="));
    }
  }
  SECTION("fused_linear_jsd: the soft loss alone, the student as wide as the teacher") {
    for (const auto &entry :
         list_workload_files(kibench::test::source_dir() / "workloads" / "fused_linear_jsd" / "small")) {
      const Workload w = load_workload(entry);
      REQUIRE(w.operation_kind == operation_named("fused_linear_jsd"));
      CHECK(w.scalars.weight_hard == 0.0);
      CHECK(w.scalars.weight_soft == 1.0);
      CHECK(w.student_hidden == w.hidden);
      CHECK(w.dtype == FloatType::bf16);
      CHECK(w.operation_kind->grad_student_input_shape(w) == std::vector<std::int64_t>{w.tokens, w.hidden});
      CHECK_FALSE(w.operation_kind->shared_code_title().empty());
    }
  }
}
