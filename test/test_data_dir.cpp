// kibench finds its data (workloads, the Liger import's KernelIndex tables,
// LICENSE, NOTICE) beside the code that runs, not in the source tree it was
// built from (lib/io/data_dir.hpp): the build tree's mirror, and a build
// carried elsewhere with its share/kibench, run from any folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "lib/io/data_dir.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

TEST_CASE("the data folder is found beside the binary and mirrors the source's", "[data-dir]") {
  const fs::path module = kibench::io::module_directory();
  CHECK(module == fs::canonical("/proc/self/exe").parent_path());
  const auto candidates = kibench::io::data_directory_candidates();
  REQUIRE(candidates.size() == 2);
  CHECK(candidates[0] == module / "share" / "kibench");
  CHECK(candidates[1] == module.parent_path() / "share" / "kibench");

  // The test binary is one folder down the build tree: build/share/kibench.
  const auto data = kibench::io::data_directory();
  REQUIRE(data.has_value());
  CHECK(*data == candidates[1]);
  const fs::path &source = kibench::test::source_dir();
  for (const char *file : {"LICENSE", "NOTICE", "workloads/operations/distill_jsd_loss.json",
                           "workloads/small/small-v1000-h64-t32.json",
                           "workloads/kernelindex/liger/implementations-by-kernel-provider.json"}) {
    INFO(file);
    REQUIRE(fs::is_regular_file(*data / file));
    CHECK(read_text(*data / file) == read_text(source / file));
  }
}

TEST_CASE("a carried build finds its data beside itself, from any folder", "[data-dir][cli]") {
  // DEST/kibench and DEST/share/kibench, as scripts/package_for_device.sh
  // lays them out, run from a folder with no workloads and no override.
  const TempDir tmp;
  const fs::path carry = fs::canonical(tmp.path()) / "carry" / "gpu";
  fs::create_directories(carry / "share");
  fs::copy_file(KIBENCH_BINARY, carry / "kibench");
  const auto data = kibench::io::data_directory();
  REQUIRE(data.has_value());
  fs::copy(*data, carry / "share" / "kibench", fs::copy_options::recursive);
  const fs::path elsewhere = tmp.path() / "elsewhere";
  fs::create_directories(elsewhere);
  const std::string prefix = "cd " + quoted(elsewhere) +
                             " && env -u KIBENCH_WORKLOADS -u KIBENCH_LIGER_DATA " +
                             quoted(carry / "kibench") + " ";

  const auto listed = run_command(prefix + "list");
  INFO(listed.err);
  CHECK(listed.exit_code == 0);
  CHECK_THAT(listed.out,
             Contains("workloads in " + (carry / "share" / "kibench" / "workloads").string() + ":"));
  CHECK_THAT(listed.out, Contains("small/small-v1000-h64-t32.json"));
  CHECK_THAT(listed.out, !Contains("INVALID"));

  const auto imported = run_command(prefix + "import liger " +
                                    quoted(kibench::test::test_data_dir() / "liger" / "jsd-family-rows.csv") +
                                    " --out imported");
  INFO(imported.err);
  CHECK(imported.exit_code == 0);
  CHECK(fs::is_directory(elsewhere / "imported"));

  SECTION("without its data it says where it looked") {
    fs::remove_all(carry / "share");
    const auto missing = run_command(prefix + "list");
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.err, Contains((carry.parent_path() / "share" / "kibench" / "workloads").string()));
  }
}
