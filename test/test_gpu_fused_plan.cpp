// The fused implementation's host-side facts, checked without a GPU: how
// the token chunks are sized (and what they cost), and its revision
// manifest against the KernelIndex schema.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "fused/chunk_plan.hpp"
#include "fused/fused_implementation.hpp"
#include "json/canonical.hpp"

using namespace kibench;
using namespace kibench::gpu::fused;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kPlenty = std::uint64_t{128} << 30;

const ChunkShape kSeed{.tokens = 8192, .vocab = 128256, .student_hidden = 2048, .student_bias = false};

} // namespace

TEST_CASE("fused chunks: the seed runs in 4 chunks of 2048 rows within 2 GiB", "[fused]") {
  std::string why;
  const auto plan = plan_chunks(kSeed, kDefaultWorkspaceBudget, kPlenty, 0, &why);
  INFO(why);
  REQUIRE(plan.has_value());
  CHECK(plan->rows == 2048);
  CHECK(plan->chunks == 4);
  CHECK(plan->ld == 128256); // already a multiple of 64
  CHECK(plan->workspace_bytes <= kDefaultWorkspaceBudget);
  // The fp32 grad W accumulator alone is 1.05 GB; two bf16 [2048, V] chunks another 1.05 GB.
  CHECK(plan->workspace_bytes > std::uint64_t{2} * 1'050'000'000);
  CHECK(plan->workspace_bytes == workspace_bytes(kSeed, 2048));
  // One more 128-row step would not fit.
  CHECK(workspace_bytes(kSeed, 2048 + 128) > kDefaultWorkspaceBudget);
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
    std::string why;
    CHECK_FALSE(plan_chunks(kSeed, kGiB, kPlenty, 0, &why).has_value());
    CHECK(why.find("GiB") != std::string::npos);
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

TEST_CASE("fused: the revision manifest validates against the ImplementationRevision schema", "[fused]") {
  const json::Value manifest = make_fused()->revision();
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("kibench-fused-revision-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(file);
    out << json::pretty(manifest);
  }
  const std::string command = std::string("/usr/bin/python3 ") + KIBENCH_SOURCE_DIR +
                              "/test/schema/validate.py " + KIBENCH_SOURCE_DIR +
                              "/test/data/kernelindex/schemas " + file.string() + " > /dev/null";
  const int status = std::system(command.c_str());
  std::filesystem::remove(file);
  CHECK(status == 0);
  CHECK(manifest.find("metadata")->find("name")->as_string() == "kibench-fused");
  CHECK(manifest.find("spec")->find("callable")->find("language")->as_string() == "cuda");
}

TEST_CASE("fused chunks: the default budget keeps efficient chunks when grad W alone nearly fills 2 GiB",
          "[fused]") {
  // The seed stays within 2 GiB in 2048-row chunks.
  CHECK(default_workspace_budget(kSeed) == kDefaultWorkspaceBudget);
  for (const ChunkShape shape : {ChunkShape{.tokens = 8192, .vocab = 256000, .student_hidden = 2048},
                                 ChunkShape{.tokens = 8192, .vocab = 128256, .student_hidden = 4096}}) {
    const std::uint64_t budget = default_workspace_budget(shape);
    CHECK(budget > kDefaultWorkspaceBudget);
    const auto plan = plan_chunks(shape, budget, kPlenty, 0);
    REQUIRE(plan.has_value());
    CHECK(plan->rows == 2048);
    CHECK(plan->workspace_bytes <= budget);
  }
}
