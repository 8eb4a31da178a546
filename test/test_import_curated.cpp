// The curated KernelIndex tables the Liger import reads: the shipped copy is
// consistent and matches KernelIndex's published digests; a copy that is not
// is refused before any row is read.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "lib/error.hpp"
#include "lib/importers/liger/liger_import.hpp"
#include "test/cli_process.hpp"

namespace fs = std::filesystem;
namespace liger = kibench::importers::liger;
using Catch::Matchers::Contains;
using kibench::test::read_text;
using kibench::test::TempDir;

namespace {

const fs::path kShipped = fs::path(KIBENCH_SOURCE_DIR) / "workloads" / "kernelindex" / "liger";

// A copy of the shipped tables with `from` replaced by `to` in `file`.
fs::path edited_copy(const TempDir &dir, const std::string &file, const std::string &from,
                     const std::string &to) {
  const fs::path copy = dir.path() / "data";
  fs::copy(kShipped, copy);
  std::string text = read_text(copy / file);
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(copy / file, std::ios::binary | std::ios::trunc) << text;
  return copy;
}

} // namespace

TEST_CASE("the shipped tables carry KernelIndex's digests", "[import][curated]") {
  const auto tables = liger::load_jsd_family_tables(kShipped);
  // The seed record's protocol, environment and implementation.
  CHECK(tables.protocol("full")->digest ==
        "sha256:5b02ee9a2140fbc6fcc1c89800f6c177ba22718c8897cb532bf0ba91867c1e58");
  CHECK(tables.environment("NVIDIA H100 80GB HBM3")->digest ==
        "sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393");
  CHECK(tables.implementation("distill_jsd_loss", "torch")->digest ==
        "sha256:7f1248e6e0aaddc0af487dbc9d280632c701b28f9bce8b6a3bb19e06bc2cd48d");
  // The operations the implementations name.
  CHECK(tables.operation("distill_jsd_loss")->digest ==
        "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5");
  CHECK(tables.operation("fused_linear_jsd")->digest ==
        "sha256:71138de338d4a1a85e751a2db3bd1a1c08f93a234a9ab0cfd9c5ab35eb180b72");
  CHECK(tables.operation("jsd")->digest ==
        "sha256:eccbf4150e60ad41ce52a4bd06fa582b8b4d5ed394fcd096f069b08eadf420e6");
  // The GPUs KernelIndex's README names in prose.
  CHECK(tables.environment("NVIDIA A100-SXM4-80GB") != nullptr);
  CHECK(tables.environment("NVIDIA GeForce RTX 4090") != nullptr);
  CHECK(tables.environment("NVIDIA H200") == nullptr);
  CHECK(tables.project("triton") == nullptr);
}

TEST_CASE("the copies are verbatim", "[import][curated]") {
  const fs::path published = fs::path(KIBENCH_SHARED_DIR) / "kernelindex" / "liger";
  REQUIRE(fs::is_directory(published));
  for (const auto *file :
       {"operation-jsd.json", "operation-fused_linear_jsd.json", "operation-distill_jsd_loss.json",
        "protocols-by-mode.json", "implementations-by-kernel-provider.json", "projects-by-provider.json",
        "environments-by-gpu-name.json"}) {
    INFO(file);
    CHECK(read_text(kShipped / file) == read_text(published / file));
  }
  CHECK(read_text(kShipped / "LICENSE") == read_text(published.parent_path() / "LICENSE"));
}

TEST_CASE("inconsistent tables are refused", "[import][curated]") {
  TempDir dir;
  SECTION("an implementation of another operation") {
    const fs::path data =
        edited_copy(dir, "implementations-by-kernel-provider.json",
                    "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5",
                    "sha256:eccbf4150e60ad41ce52a4bd06fa582b8b4d5ed394fcd096f069b08eadf420e6");
    CHECK_THROWS_WITH(liger::load_jsd_family_tables(data),
                      Contains("\"distill_jsd_loss/liger\": spec.operation.specDigest is not the digest of "
                               "operation-distill_jsd_loss.json"));
  }
  SECTION("a GPU curated twice") {
    const fs::path data =
        edited_copy(dir, "environments-named-in-readme.json", "\"NVIDIA A100-SXM4-80GB\"", "\"NVIDIA B200\"");
    CHECK_THROWS_WITH(liger::load_jsd_family_tables(data), Contains("\"NVIDIA B200\": curated twice"));
  }
  SECTION("a manifest of the wrong kind") {
    const fs::path data =
        edited_copy(dir, "protocols-by-mode.json", "\"BenchmarkProtocol\"", "\"WorkloadCase\"");
    CHECK_THROWS_AS(liger::load_jsd_family_tables(data), kibench::InputError);
  }
  SECTION("a missing table, from the command line") {
    const fs::path csv = fs::path(KIBENCH_TEST_DATA) / "liger" / "jsd-family-rows.csv";
    const auto result = kibench::test::run_kibench(
        "import liger " + kibench::test::quoted(csv) + " --curated " +
        kibench::test::quoted(dir.path() / "none") + " --out " + kibench::test::quoted(dir.path() / "out"));
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Contains("operation-jsd.json: cannot read"));
    CHECK_FALSE(fs::exists(dir.path() / "out"));
  }
}
