// The fused implementation's host-side facts, checked without a GPU: how
// the token chunks are sized (and what they cost), where the grad W
// accumulator is split, the stages of its in-place conversion, and the
// revision manifests against the KernelIndex schema.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "kernels/lm_head/fused/chunk_plan.hpp"
#include "kernels/lm_head/fused/fp8_teacher.hpp"
#include "kernels/lm_head/fused/fused_implementation.hpp"
#include "kernels/lm_head/fused/grad_weight_split.hpp"
#include "kernels/machine/backend.hpp"
#include "kernels/registry.hpp"
#include "lib/json/canonical.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/run/backend.hpp"
#include "lib/run/session.hpp"
#include "test/source_tree.hpp"

using namespace kibench;
using namespace kibench::gpu::fused;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kPlenty = std::uint64_t{128} << 30;

const ChunkShape kSeed{.tokens = 8192, .vocab = 128256, .student_hidden = 2048, .student_bias = false};

// The workspace half of the seed's fp32 grad W accumulator: 4 (V − V/2) Hs.
constexpr std::uint64_t kSeedHighHalf = 4 * std::uint64_t{64128} * 2048;
// Per token row: bf16 z_s and z_t rows of ld = V elements.
constexpr std::uint64_t kSeedRowBytes = 2 * 2 * std::uint64_t{128256};

} // namespace

TEST_CASE("fused chunks: the seed runs in 3 chunks of 2816 rows within 2 GiB", "[fused]") {
  std::string why;
  const auto plan = plan_chunks(kSeed, kDefaultWorkspaceBudget, kPlenty, 0, &why);
  INFO(why);
  REQUIRE(plan.has_value());
  // Up to 3096 rows fit; 3 chunks are the fewest, evened to 2731 and rounded up to 128.
  CHECK(plan->rows == 2816);
  CHECK(plan->chunks == 3);
  CHECK(plan->ld == 128256); // already a multiple of 64
  CHECK(plan->workspace_bytes <= kDefaultWorkspaceBudget);
  CHECK(plan->workspace_bytes == workspace_bytes(kSeed, 2816));
  CHECK(plan->workspace_bytes == 2'003'731'456); // 1.87 GiB
  CHECK(workspace_bytes(kSeed, 3096) <= kDefaultWorkspaceBudget);
  CHECK(workspace_bytes(kSeed, 3097) > kDefaultWorkspaceBudget);
  CHECK(2 * 3096 < kSeed.tokens);
  // At v2's 2048 rows the split saves exactly the accumulator's low half:
  // 2,135,065,600 B (1.99 GiB, the whole fp32 accumulator as workspace) before.
  CHECK(workspace_bytes(kSeed, 2048) == 2'135'065'600 - kSeedHighHalf);
  CHECK(workspace_bytes(kSeed, 2049) - workspace_bytes(kSeed, 2048) <= kSeedRowBytes + 2 * 512);
}

TEST_CASE("fused chunks: fused-lean fits the seed within 1 GiB in 9 chunks of 1003 rows", "[fused]") {
  REQUIRE(kLeanWorkspaceBudget == std::uint64_t{1073741824});
  std::string why;
  const auto plan = plan_chunks(kSeed, kLeanWorkspaceBudget, kPlenty, 0, &why);
  INFO(why);
  REQUIRE(plan.has_value());
  // 1003 rows fit (1004 do not); 9 chunks evened to 911 would round up to
  // 1024, past them, so R stays 1003: 8 x 1003 + 168.
  CHECK(plan->rows == 1003);
  CHECK(plan->chunks == 9);
  CHECK(plan->workspace_bytes == 1'073'618'944);
  CHECK(plan->workspace_bytes <= kLeanWorkspaceBudget);
  CHECK(workspace_bytes(kSeed, 1004) > kLeanWorkspaceBudget);
  // The harness reports the allocator's live workspace bytes, which
  // workspace_bytes() mirrors (the GPU memory test checks equality): every
  // buffer rounded to 512, the 32 MiB cuBLASLt workspace included. The sort
  // scratch is asked of the GPU; whatever it is, the plan stays within the
  // budget, and up to 119 KiB of it R stays 1003.
  for (const std::uint64_t sort : {std::uint64_t{1}, std::uint64_t{64} << 10, std::uint64_t{119} << 10,
                                   std::uint64_t{1} << 20, std::uint64_t{16} << 20}) {
    ChunkShape shape = kSeed;
    shape.sort_temp_bytes = sort;
    const auto p = plan_chunks(shape, kLeanWorkspaceBudget, kPlenty, 0);
    INFO("sort scratch " << sort);
    REQUIRE(p.has_value());
    CHECK(p->workspace_bytes <= kLeanWorkspaceBudget);
    CHECK(p->workspace_bytes == workspace_bytes(shape, p->rows));
    if (sort <= (std::uint64_t{119} << 10)) CHECK(p->rows == 1003);
    CHECK(p->rows >= 960);
  }
}

TEST_CASE("fused chunks: the logit GEMMs' row statistics cost 16 bytes a row and 256-column tile",
          "[fused]") {
  ChunkShape seed = kSeed;
  seed.logit_statistics = true;
  // Two float2 a row and tile (z_s and z_t): 501 tiles at V = 128256.
  CHECK(workspace_bytes(seed, 2816) - workspace_bytes(kSeed, 2816) ==
        2 * ((2816 * 501 * 8 + 511) / 512 * 512));
  // The 2 GiB plan keeps its 3 chunks of 2816 rows.
  const auto standard = plan_chunks(seed, kDefaultWorkspaceBudget, kPlenty, 0);
  REQUIRE(standard.has_value());
  CHECK(standard->rows == 2816);
  CHECK(standard->chunks == 3);
  CHECK(standard->workspace_bytes == workspace_bytes(seed, 2816));
  CHECK(standard->workspace_bytes <= kDefaultWorkspaceBudget);
  // fused-lean gives up rows to stay within 1 GiB: R = 987 fit (988 do not),
  // 9 chunks evened to 911 would round up to 1024, so R stays 987.
  const auto lean = plan_chunks(seed, kLeanWorkspaceBudget, kPlenty, 0);
  REQUIRE(lean.has_value());
  CHECK(lean->rows == 987);
  CHECK(lean->chunks == 9);
  CHECK(lean->workspace_bytes == workspace_bytes(seed, 987));
  CHECK(lean->workspace_bytes <= kLeanWorkspaceBudget);
  CHECK(workspace_bytes(seed, 988) > kLeanWorkspaceBudget);
  // Where the default budget is raised to fit 2048-row chunks, it counts the
  // statistics buffers' rounding as the plan does, so the chunks stay 2048
  // rows (a budget short by 1 KiB planned 5 chunks of 1664 here).
  for (ChunkShape shape : {ChunkShape{.tokens = 8192, .vocab = 256000, .student_hidden = 2048},
                           ChunkShape{.tokens = 8192, .vocab = 128256, .student_hidden = 4096}}) {
    shape.sort_temp_bytes = 100000;
    shape.logit_statistics = true;
    INFO("V " << shape.vocab << ", Hs " << shape.student_hidden);
    const auto plan = plan_chunks(shape, default_workspace_budget(shape), kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->rows == 2048);
    CHECK(plan->chunks == 4);
  }
}

TEST_CASE("fused chunks: free memory and the budget both bound the rows", "[fused]") {
  SECTION("little free memory: smaller, evened-out chunks") {
    const std::uint64_t available = workspace_bytes(kSeed, 1000);
    const auto plan = plan_chunks(kSeed, kDefaultWorkspaceBudget, available, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->workspace_bytes <= available);
    CHECK(plan->rows <= 1000);
    CHECK(plan->chunks == (8192 + plan->rows - 1) / plan->rows);
    // 999 rows fit; 9 chunks of them (911 rounded up to 128 would not fit).
    CHECK(plan->rows == 999);
    CHECK(plan->chunks == 9);
  }
  SECTION("a budget below the fixed part is refused with the reason") {
    // Fixed part at the seed: 32 MiB + the accumulator's high half (0.53 GB) + 0.16 MB.
    std::string why;
    CHECK_FALSE(plan_chunks(kSeed, kGiB / 2, kPlenty, 0, &why).has_value());
    CHECK(why.find("GiB") != std::string::npos);
    CHECK(plan_chunks(kSeed, kGiB, kPlenty, 0).has_value());
  }
  SECTION("short sequences run in one chunk of exactly T rows") {
    const ChunkShape shape{.tokens = 300, .vocab = 32000, .student_hidden = 256};
    const auto plan = plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->rows == 300);
    CHECK(plan->chunks == 1);
    CHECK(plan->ld == 32000);
  }
  SECTION("forced rows are clamped to T; the stride pads V to 64") {
    const ChunkShape shape{.tokens = 16, .vocab = 50257, .student_hidden = 32, .student_bias = true};
    const auto forced = plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 5);
    REQUIRE(forced.has_value());
    CHECK(forced->rows == 5);
    CHECK(forced->chunks == 4);
    CHECK(forced->ld == 50304);
    CHECK(plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 100)->rows == 16);
  }
  SECTION("the row kernel's grid bounds a chunk at 65535 rows") {
    const ChunkShape longest{.tokens = 200'000, .vocab = 1000, .student_hidden = 64};
    const auto plan = plan_chunks(longest, kPlenty, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->rows <= kMaxChunkRows);
    CHECK(plan->chunks == 4);
  }
}

TEST_CASE("fused chunks: a direct plan (one chunk, 8 T <= V) holds no grad W accumulator", "[fused]") {
  // T = 1024 at the seed's V and Hs: 8 T <= V, so grad W can leave one GEMM.
  ChunkShape shape = kSeed;
  shape.tokens = 1024;
  ChunkShape accumulating = shape;
  shape.direct_grad_weight = true;
  // Only the accumulator's high half goes: 4 (V - S) Hs = 525,336,576 B of
  // 1,084,249,088 (1024 z_s and z_t rows, 32 MiB of cuBLASLt, 0.04 MB else).
  CHECK(direct_plan(shape, 1024));
  CHECK(workspace_bytes(shape, 1024) == 558'912'512);
  CHECK(workspace_bytes(accumulating, 1024) == 1'084'249'088);
  CHECK(workspace_bytes(accumulating, 1024) - workspace_bytes(shape, 1024) == kSeedHighHalf);

  SECTION("chosen within the default budget") {
    const auto plan = plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->direct);
    CHECK(plan->chunks == 1);
    CHECK(plan->rows == 1024);
    CHECK(plan->workspace_bytes == 558'912'512);
  }
  SECTION("fused-lean: one direct chunk where the accumulator took two") {
    const auto direct = plan_chunks(shape, kLeanWorkspaceBudget, kPlenty, 0);
    REQUIRE(direct.has_value());
    CHECK(direct->direct);
    CHECK(direct->chunks == 1);
    const auto chunked = plan_chunks(accumulating, kLeanWorkspaceBudget, kPlenty, 0);
    REQUIRE(chunked.has_value());
    CHECK_FALSE(chunked->direct);
    CHECK(chunked->chunks == 2);
    CHECK(chunked->rows == 512);
  }
  SECTION("not where memory holds less than the one chunk: the chunked plan") {
    // Chunks with the accumulator can need less than one direct chunk where
    // the rows they leave out outweigh it: (T - R) 4 V > 2 V Hs, here at T = 4096.
    ChunkShape longer = shape;
    longer.tokens = 4096;
    const std::uint64_t one_chunk = workspace_bytes(longer, 4096);
    const auto plan = plan_chunks(longer, kPlenty, one_chunk - 1, 0);
    REQUIRE(plan.has_value());
    CHECK_FALSE(plan->direct);
    CHECK(plan->chunks == 2);
    CHECK(plan->workspace_bytes == workspace_bytes(longer, plan->rows));
    CHECK(plan->workspace_bytes < one_chunk);
    CHECK(plan_chunks(longer, kPlenty, one_chunk, 0)->direct);
  }
  SECTION("not with forced rows that split T, nor where 8 T > V") {
    const auto forced = plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 1000);
    REQUIRE(forced.has_value());
    CHECK_FALSE(forced->direct);
    CHECK(forced->chunks == 2);
    CHECK(plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 4096)->direct); // clamped to T
    ChunkShape wide = shape;
    wide.tokens = 128256 / 8 + 1;
    CHECK_FALSE(direct_plan(wide, wide.tokens));
    const auto plan = plan_chunks(wide, kPlenty, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->chunks == 1);
    CHECK_FALSE(plan->direct);
    wide.tokens = 128256 / 8;
    CHECK(direct_plan(wide, wide.tokens));
  }
  SECTION("the seed (8 T > V) plans as before") {
    ChunkShape seed = kSeed;
    seed.direct_grad_weight = true;
    const auto plan = plan_chunks(seed, kDefaultWorkspaceBudget, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK_FALSE(plan->direct);
    CHECK(plan->rows == 2816);
    CHECK(plan->workspace_bytes == 2'003'731'456);
  }
}

namespace {

// The schema validator's exit status for one manifest.
int validate_manifest(const json::Value &manifest, const std::string &label) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("kibench-" + label + "-revision-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(file);
    out << json::pretty(manifest);
  }
  const std::string source = kibench::test::source_dir().string();
  const std::string command = "/usr/bin/python3 " + source + "/test/schema/validate.py " + source +
                              "/test/data/kernelindex/schemas " + file.string() + " > /dev/null";
  const int status = std::system(command.c_str());
  std::filesystem::remove(file);
  return status;
}

} // namespace

TEST_CASE("fused chunks: the row statistics pay from Hs = 2048 and 1024-row chunks where they leave the "
          "plan as it is",
          "[fused]") {
  const auto plans = [](ChunkShape shape) {
    shape.sort_temp_bytes = 100000;
    ChunkShape with = shape;
    with.logit_statistics = true;
    const auto a = plan_chunks(with, default_workspace_budget(with), kPlenty, 0);
    const auto b = plan_chunks(shape, default_workspace_budget(shape), kPlenty, 0);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    return statistics_pay(with, *a, *b);
  };
  // The seed (3 chunks of 2816 either way), H = 8192 and V = 256000 (4 of
  // 2048), T = 32768: the same chunks.
  CHECK(plans(kSeed));
  CHECK(plans(ChunkShape{.tokens = 8192, .vocab = 128256, .student_hidden = 4096}));
  CHECK(plans(ChunkShape{.tokens = 8192, .vocab = 256000, .student_hidden = 2048}));
  CHECK(plans(ChunkShape{.tokens = 32768, .vocab = 128256, .student_hidden = 2048}));
  // A short student K: H = 2048.
  CHECK_FALSE(plans(ChunkShape{.tokens = 8192, .vocab = 128256, .student_hidden = 1024}));
  // T = 4096: the statistics' 66 MB push the one direct chunk (2.13 GB)
  // over 2 GiB, into two accumulated chunks.
  CHECK_FALSE(
      plans(ChunkShape{.tokens = 4096, .vocab = 128256, .student_hidden = 2048, .direct_grad_weight = true}));
  CHECK(
      plans(ChunkShape{.tokens = 2048, .vocab = 128256, .student_hidden = 2048, .direct_grad_weight = true}));
  // Short passes, one direct chunk either way: from 1024 rows on.
  CHECK(
      plans(ChunkShape{.tokens = 1024, .vocab = 128256, .student_hidden = 2048, .direct_grad_weight = true}));
  for (const std::int64_t tokens : {1, 7, 128, 1000, 1023})
    CHECK_FALSE(plans(
        ChunkShape{.tokens = tokens, .vocab = 128256, .student_hidden = 2048, .direct_grad_weight = true}));
}

TEST_CASE("fused: the revision manifest validates against the ImplementationRevision schema", "[fused]") {
  const json::Value manifest = implementation_manifest(make_fused()->revision());
  CHECK(validate_manifest(manifest, "fused") == 0);
  CHECK(manifest.find("metadata")->find("name")->as_string() == "kibench-fused");
  // No budget label; at most the note that the tree differs from its commit.
  if (const json::Value *labels = manifest.find("metadata")->find("labels"))
    for (const auto &[key, value] : labels->as_object()) CHECK(key == "source_tree");
  CHECK(manifest.find("spec")->find("callable")->find("language")->as_string() == "cuda");
}

TEST_CASE("fused-lean: registered, named, and its manifest states the 1 GiB budget", "[fused]") {
  const RegisteredImplementation *r = find_implementation("fused-lean");
  REQUIRE(r != nullptr);
  CHECK(r->needs_gpu);
  CHECK_FALSE(r->is_oracle);
  CHECK(r->summary.find("1 GiB") != std::string::npos);
  const auto impl = r->make();
  CHECK(impl->name() == "fused-lean");
  CHECK(impl->needs_gpu());
  const json::Value manifest = implementation_manifest(impl->revision());
  CHECK(validate_manifest(manifest, "fused-lean") == 0);
  const json::Value &metadata = *manifest.find("metadata");
  CHECK(metadata.find("name")->as_string() == "kibench-fused-lean");
  CHECK(metadata.find("title")->as_string().find("1 GiB") != std::string::npos);
  CHECK(metadata.find("description")->as_string().find("1073741824 bytes") != std::string::npos);
  REQUIRE(metadata.find("labels") != nullptr);
  CHECK(metadata.find("labels")->find("workspace_budget_bytes")->as_string() == "1073741824");
  // The same implementation otherwise: the revision differs only in metadata.
  CHECK(*manifest.find("spec") == *implementation_manifest(make_fused()->revision()).find("spec"));
}

TEST_CASE("fused-rowstats: registered, named, and its manifest says which logit GEMMs it runs", "[fused]") {
  const RegisteredImplementation *r = find_implementation("fused-rowstats");
  REQUIRE(r != nullptr);
  CHECK(r->needs_gpu);
  CHECK_FALSE(r->is_oracle);
  const auto impl = r->make();
  CHECK(impl->name() == "fused-rowstats");
  const json::Value manifest = implementation_manifest(impl->revision());
  CHECK(validate_manifest(manifest, "fused-rowstats") == 0);
  const json::Value &metadata = *manifest.find("metadata");
  CHECK(metadata.find("name")->as_string() == "kibench-fused-rowstats");
  CHECK(metadata.find("title")->as_string().find("row statistics") != std::string::npos);
  CHECK(metadata.find("description")->as_string().find("softmax statistics") != std::string::npos);
  const json::Value fused = implementation_manifest(make_fused()->revision());
  CHECK(fused.find("metadata")->find("description")->as_string().find("at least 2048") != std::string::npos);
  // The same implementation otherwise: the revision differs only in metadata.
  CHECK(*manifest.find("spec") == *fused.find("spec"));
  const RegisteredImplementation *cublaslt = find_implementation("fused-cublaslt");
  REQUIRE(cublaslt != nullptr);
  const json::Value off = implementation_manifest(cublaslt->make()->revision());
  CHECK(validate_manifest(off, "fused-cublaslt") == 0);
  CHECK(off.find("metadata")
            ->find("description")
            ->as_string()
            .find("Everywhere the logit GEMMs are cuBLASLt's") != std::string::npos);
  CHECK(*off.find("spec") == *fused.find("spec"));
}

TEST_CASE("fused-fp8-teacher: registered apart from the defaults, and its manifest describes the FP8 GEMM",
          "[fused]") {
  const RegisteredImplementation *r = find_implementation("fused-fp8-teacher");
  REQUIRE(r != nullptr);
  const std::vector<std::string> defaults = default_implementations(*make_backend());
  CHECK(std::find(defaults.begin(), defaults.end(), "fused") != defaults.end());
  CHECK(std::find(defaults.begin(), defaults.end(), "fused-fp8-teacher") == defaults.end());
  CHECK(r->needs_gpu);
  CHECK_FALSE(r->is_oracle);
  CHECK(r->summary.find("FP8 e4m3") != std::string::npos);
  const auto impl = r->make();
  CHECK(impl->name() == "fused-fp8-teacher");
  const json::Value manifest = implementation_manifest(impl->revision());
  CHECK(validate_manifest(manifest, "fused-fp8-teacher") == 0);
  const json::Value &metadata = *manifest.find("metadata");
  CHECK(metadata.find("name")->as_string() == "kibench-fused-fp8-teacher");
  CHECK(metadata.find("title")->as_string().find("FP8 e4m3 teacher") != std::string::npos);
  const std::string description = metadata.find("description")->as_string();
  // What prepare() does to W_t and what the timed pass does to x_t, and the
  // budget that holds the e4m3 copy.
  CHECK(description.find("s_w[v] = amax(W_t[v, :]) / 448") != std::string::npos);
  CHECK(description.find("s_x[i] = amax(x_t[i, :]) / 448") != std::string::npos);
  CHECK(description.find("in every timed pass") != std::string::npos);
  CHECK(description.find("beside the e4m3 copy of W_t") != std::string::npos);
  CHECK(description.find("abt") == std::string::npos);
  CHECK(metadata.find("labels")->find("teacher_logit_gemm")->as_string().starts_with("fp8 e4m3"));
  // The same code as fused: the revision differs only in metadata.
  CHECK(*manifest.find("spec") == *implementation_manifest(make_fused()->revision()).find("spec"));
}

TEST_CASE("fused-fp8-teacher: runs where cuBLASLt has outer-vector FP8 scaling, compute capability 9.0",
          "[fused]") {
  CHECK_FALSE(fp8_teacher_unsupported(9, 0).has_value()); // H100, H200
  // Ada has FP8 tensor cores but per-tensor scales only; Blackwell scales by blocks.
  for (const auto &[major, minor] : {std::pair{8, 9}, std::pair{8, 0}, std::pair{10, 0}, std::pair{12, 0}}) {
    const auto why = fp8_teacher_unsupported(major, minor);
    REQUIRE(why.has_value());
    CHECK(why->find(fmt::format("this GPU is {}.{}", major, minor)) != std::string::npos);
    CHECK(why->find("outer-vector") != std::string::npos);
  }
}

TEST_CASE("fused chunks: an FP8 teacher adds its e4m3 copies, and the seed keeps 3 chunks of 2816 rows",
          "[fused]") {
  ChunkShape fp8 = kSeed;
  fp8.fp8_teacher_hidden = 4096;
  // W_t in e4m3, 128256 x 4096 B, and its 128256 fp32 scales: V and H are
  // multiples of 16 already.
  CHECK(fp8_teacher_weight_bytes(kSeed) == 0);
  CHECK(fp8_teacher_weight_bytes(fp8) == 525'336'576 + 513'024);
  CHECK(default_workspace_budget(fp8) == kDefaultWorkspaceBudget + 525'849'600);
  const auto plan = plan_chunks(fp8, default_workspace_budget(fp8), kPlenty, 0);
  REQUIRE(plan.has_value());
  CHECK(plan->rows == 2816);
  CHECK(plan->chunks == 3);
  // fused's 2,003,731,456 B, the weight copy, and 2816 rows of x_t codes
  // (4096 B) and scales (4 B).
  CHECK(plan->workspace_bytes == std::uint64_t{2'003'731'456} + 525'849'600 + 2816 * 4096 + 11'264);
  CHECK(plan->workspace_bytes == workspace_bytes(fp8, 2816));
  CHECK(plan->workspace_bytes <= default_workspace_budget(fp8));
  // Padding: V = 1001 and H = 70 become 1008 and 80; a bias adds 1008 bf16.
  const ChunkShape odd{.tokens = 40,
                       .vocab = 1001,
                       .student_hidden = 35,
                       .fp8_teacher_hidden = 70,
                       .fp8_teacher_bias = true};
  // 1008 x 80 = 80640 B of codes (80896 as allocated, in 512-byte units),
  // 4032 B of scales (4096), 2016 B of bias (2048).
  CHECK(fp8_teacher_weight_bytes(odd) == 80'896 + 4096 + 2048);
  ChunkShape no_fp8 = odd;
  no_fp8.fp8_teacher_hidden = 0;
  CHECK(workspace_bytes(odd, 9) - workspace_bytes(no_fp8, 9) == fp8_teacher_weight_bytes(odd) + 1024 + 512);
}

TEST_CASE("fused chunks: the default budget keeps efficient chunks when grad W alone nearly fills 2 GiB",
          "[fused]") {
  // The seed stays within 2 GiB, in chunks longer than 2048 rows.
  CHECK(default_workspace_budget(kSeed) == kDefaultWorkspaceBudget);
  SECTION("V = 256000: half the accumulator (1.05 GB) and 2048 rows (2.10 GB) exceed 2 GiB") {
    const ChunkShape shape{.tokens = 8192, .vocab = 256000, .student_hidden = 2048};
    const std::uint64_t budget = default_workspace_budget(shape);
    CHECK(budget > kDefaultWorkspaceBudget);
    const auto plan = plan_chunks(shape, budget, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->rows == 2048);
    CHECK(plan->workspace_bytes <= budget);
    CHECK(plan->workspace_bytes ==
          workspace_bytes(shape, 2048)); // 2.96 GiB (3.94 with the whole accumulator)
  }
  SECTION("Hs = 4096 needed the raise while the whole accumulator was workspace; now 2 GiB hold 2048 rows") {
    const ChunkShape shape{.tokens = 8192, .vocab = 128256, .student_hidden = 4096};
    CHECK(default_workspace_budget(shape) == kDefaultWorkspaceBudget);
    const auto plan = plan_chunks(shape, kDefaultWorkspaceBudget, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->rows == 2048);
    CHECK(plan->chunks == 4);
    CHECK(plan->workspace_bytes <= kDefaultWorkspaceBudget);
  }
}

TEST_CASE("fused grad W split: the low half fits the bf16 output, the high half's G' columns are aligned",
          "[fused]") {
  std::vector<std::int64_t> vocabularies;
  for (std::int64_t v = 1; v <= 4100; ++v) vocabularies.push_back(v);
  for (const std::int64_t v : {32000, 50257, 128256, 151936, 256000, 262143}) vocabularies.push_back(v);
  for (const std::int64_t v : vocabularies) {
    const std::int64_t s = grad_weight_split(v);
    INFO("V = " << v << ", S = " << s);
    CHECK(s >= 0);
    CHECK(s % 8 == 0);                  // G' from column S: 2·S bytes in, 16-byte aligned
    CHECK(2 * s <= v);                  // 4·S·Hs fp32 bytes within the 2·V·Hs of the output
    CHECK(v - s <= (v + 1) / 2 + 7);    // the workspace half: at most ceil(V/2) + 7 rows
    if (v % 16 == 0) CHECK(s == v / 2); // exactly half where V allows
    if (v >= 16) CHECK(s > 0);
  }
  CHECK(grad_weight_split(128256) == 64128); // the seed: S = V − S = V/2
  CHECK(grad_weight_split(1001) == 496);     // odd V: S ≠ V − S = 505
  CHECK(grad_weight_split(15) == 0);         // all rows in the workspace
}

namespace {

// Simulates in_place_conversion_stages on a buffer of `count` fp32
// elements, in 2-byte slots (bf16 index j is slot j, fp32 element i is
// slots 2i and 2i + 1), and checks: the stages cover [0, count) in order;
// no step reads a slot that an earlier step or the same one wrote (a
// temporary stage is two steps: the kernel reads the buffer into the
// temporary, then the copy writes the buffer); every element is read
// exactly once; and the buffer ends as bf16 element i at slot i.
void simulate_in_place_conversion(std::int64_t count, std::int64_t first) {
  INFO("count " << count << ", first stage " << first);
  const auto stages = in_place_conversion_stages(count, first);
  const auto n = static_cast<std::size_t>(count);
  // Distinct fp32 bit patterns; the "conversion" keeps bits of both halves,
  // so a clobbered read gives a wrong result.
  const auto bits_of = [](std::size_t i) {
    return 0x3F800000u + static_cast<std::uint32_t>(i) * 2654435761u;
  };
  const auto convert = [](std::uint32_t bits) {
    return static_cast<std::uint16_t>((bits >> 16) ^ (bits * 31u));
  };
  std::vector<std::uint16_t> slots(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    slots[2 * i] = static_cast<std::uint16_t>(bits_of(i) & 0xFFFF); // little-endian: low half first
    slots[2 * i + 1] = static_cast<std::uint16_t>(bits_of(i) >> 16);
  }
  constexpr int kNever = -1;
  std::vector<int> writer(2 * n, kNever); // the step that last wrote a slot
  std::vector<int> reads(n, 0);
  int step = 0;
  std::int64_t expected_begin = 0;
  const auto read_element = [&](std::int64_t i, int current) {
    for (const std::size_t slot : {2 * static_cast<std::size_t>(i), 2 * static_cast<std::size_t>(i) + 1}) {
      INFO("element " << i << " slot " << slot << " written by step " << writer[slot] << ", read by step "
                      << current);
      REQUIRE(writer[slot] == kNever);
    }
    ++reads[static_cast<std::size_t>(i)];
    return convert(static_cast<std::uint32_t>(slots[2 * static_cast<std::size_t>(i)]) |
                   static_cast<std::uint32_t>(slots[2 * static_cast<std::size_t>(i) + 1]) << 16);
  };
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const ConversionStage &stage = stages[k];
    INFO("stage " << k << " [" << stage.begin << ", " << stage.end << ")");
    REQUIRE(stage.begin == expected_begin);
    REQUIRE(stage.end > stage.begin);
    CHECK(stage.through_temp == (k == 0));
    if (k == 0) CHECK(stage.end == std::min(count, first));
    expected_begin = stage.end;
    if (stage.through_temp) {
      std::vector<std::uint16_t> temp;
      const int kernel = step++;
      for (std::int64_t i = stage.begin; i < stage.end; ++i) temp.push_back(read_element(i, kernel));
      const int copy = step++;
      for (std::int64_t i = stage.begin; i < stage.end; ++i) {
        slots[static_cast<std::size_t>(i)] = temp[static_cast<std::size_t>(i - stage.begin)];
        writer[static_cast<std::size_t>(i)] = copy;
      }
    } else {
      // One kernel: its threads run in any order, so mark its writes first
      // and then require that none of its reads meets them.
      const int kernel = step++;
      std::vector<std::uint16_t> out;
      for (std::int64_t i = stage.begin; i < stage.end; ++i) writer[static_cast<std::size_t>(i)] = kernel;
      for (std::int64_t i = stage.begin; i < stage.end; ++i) out.push_back(read_element(i, kernel));
      for (std::int64_t i = stage.begin; i < stage.end; ++i)
        slots[static_cast<std::size_t>(i)] = out[static_cast<std::size_t>(i - stage.begin)];
    }
  }
  CHECK(expected_begin == std::max<std::int64_t>(count, 0));
  for (std::size_t i = 0; i < n; ++i) {
    INFO("element " << i);
    REQUIRE(reads[i] == 1);
    REQUIRE(slots[i] == convert(bits_of(i)));
  }
}

} // namespace

TEST_CASE("fused in-place conversion: no stage reads what an earlier or the same stage wrote", "[fused]") {
  for (const std::int64_t count : {1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 100, 1000, 4097, 17360})
    for (const std::int64_t first : {1, 2, 3, 4, 7, 64, 1000, 1 << 20})
      simulate_in_place_conversion(count, first);
  CHECK(in_place_conversion_stages(0, 64).empty());
  CHECK_THROWS_AS(in_place_conversion_stages(10, 0), std::invalid_argument);
}

TEST_CASE("fused in-place conversion: the stages at the seed size", "[fused]") {
  // The low half: S·Hs = 64128 · 2048 = 131,334,144 elements, stage 0 of 2^20.
  const auto stages = in_place_conversion_stages(std::int64_t{64128} * 2048, kConversionFirstStage);
  const std::vector<ConversionStage> expected = {{.begin = 0, .end = 1 << 20, .through_temp = true},
                                                 {.begin = 1 << 20, .end = 1 << 21},
                                                 {.begin = 1 << 21, .end = 1 << 22},
                                                 {.begin = 1 << 22, .end = 1 << 23},
                                                 {.begin = 1 << 23, .end = 1 << 24},
                                                 {.begin = 1 << 24, .end = 1 << 25},
                                                 {.begin = 1 << 25, .end = 1 << 26},
                                                 {.begin = 1 << 26, .end = 131'334'144}};
  CHECK(stages == expected);
  // A stage count that only grows with log2(count / n0).
  CHECK(in_place_conversion_stages(10, 10).size() == 1);
  CHECK(in_place_conversion_stages(11, 10).size() == 2);
  CHECK(in_place_conversion_stages(40, 10).size() == 3);
  CHECK(in_place_conversion_stages(41, 10).size() == 4);
}
