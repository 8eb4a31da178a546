// The curated KernelIndex tables the Liger import reads: the shipped copy is
// consistent and matches KernelIndex's published digests; a copy that is not
// is refused before any row is read.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/importers/liger/liger_import.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
namespace liger = kibench::importers::liger;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

const fs::path kShipped = kibench::test::source_dir() / "workloads" / "kernelindex" / "liger";

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
  // The sha256 of each file as KernelIndex publishes it (its Liger import's
  // tables, and its LICENSE), so that no test reads outside the repository.
  for (const auto &[file, published] : std::initializer_list<std::pair<const char *, const char *>>{
           {"operation-jsd.json", "471d8df141c90fd0d56a19c96cdaf9343fe93ac67f6c5116812343a36a3f07bb"},
           {"operation-fused_linear_jsd.json",
            "586f98d2df85a88479d625331f4af9fac9db4470d2b8b4c9b75ff9ef5ea1b334"},
           {"operation-distill_jsd_loss.json",
            "fc1293cff26165c6fa68cf05dfcfc8983c73cee37794840a2eb18df15767091d"},
           {"protocols-by-mode.json", "7c56d884e4afd3f67649d6a34b914d191d227b244b9864eb1c8d618a0acf92e4"},
           {"implementations-by-kernel-provider.json",
            "b0596d7d2fc7f938ea3d594941ff47fd26188d47e5c6af5519cd2ba33678f974"},
           {"projects-by-provider.json", "7903feefdab10b9503d2046018599ee9dbea7fb097bff53788f94174e84f395e"},
           {"environments-by-gpu-name.json",
            "173b70d31465328c18ca6adb0be6801a6b83b950712d0efb4413797ef9de320c"},
           {"LICENSE", "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"}}) {
    INFO(file);
    CHECK(kibench::sha256_digest(read_text(kShipped / file)) == std::string("sha256:") + published);
  }
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
    const fs::path csv = kibench::test::test_data_dir() / "liger" / "jsd-family-rows.csv";
    const auto result = kibench::test::run_kibench(
        "import liger " + kibench::test::quoted(csv) + " --curated " +
        kibench::test::quoted(dir.path() / "none") + " --out " + kibench::test::quoted(dir.path() / "out"));
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Contains("operation-jsd.json: cannot read"));
    CHECK_FALSE(fs::exists(dir.path() / "out"));
  }
}
