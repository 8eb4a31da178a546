// RevisionFacts → ImplementationRevision (lib/manifest/implementation_manifest.hpp):
// the one place the format is built, and what it refuses.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "kernels/builtin_revision.hpp"
#include "kernels/registry.hpp"
#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/implementation/build_source.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/envelope.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "test/source_tree.hpp"
#include "lib/operations/registry.hpp"

using namespace kibench;

namespace {

RevisionFacts valid_facts() {
  RevisionFacts f;
  f.name = "mine-fused-jsd";
  f.title = "My fused JSD";
  f.operation_digest = std::string(kDistillJsdLossOperationDigest);
  f.language = "python";
  f.source_path = "mine/jsd.py";
  f.symbol = "mine.jsd:loss";
  f.architectures = {"sm_90a", "sm_80", "sm_90a"};
  f.dtypes = {"bf16"};
  f.source.version = "1.2.3";
  f.source.commit = std::string(40, 'a');
  f.licence = "Apache-2.0";
  return f;
}

} // namespace

TEST_CASE("implementation_manifest writes the envelope, the facts and sorted sets", "[manifest]") {
  const json::Value m = implementation_manifest(valid_facts());
  CHECK(m.find("apiVersion")->as_string() == kApiVersion);
  CHECK(m.find("kind")->as_string() == "ImplementationRevision");
  CHECK(m.find("metadata")->find("name")->as_string() == "mine-fused-jsd");
  const json::Value &spec = *m.find("spec");
  CHECK(spec.find("projectRevision")->find("commit")->as_string() == std::string(40, 'a'));
  CHECK(spec.find("projectRevision")->find("treeDigest") == nullptr);
  CHECK(spec.find("licensing")->find("declared")->as_string() == "Apache-2.0");
  const auto &archs = spec.find("support")->find("hardwareArchitectures")->as_array();
  REQUIRE(archs.size() == 2);
  CHECK(archs[0].as_string() == "sm_80");
  CHECK(archs[1].as_string() == "sm_90a");
  CHECK(spec.find("buildVariants") == nullptr);
}

TEST_CASE("implementation_manifest: a package becomes a build variant with its requirements", "[manifest]") {
  RevisionFacts f = valid_facts();
  f.package = PackageFacts{.name = "liger-kernel", .version = "0.6.4", .requirements = {{"torch", "2.11.0"}}};
  const json::Value m = implementation_manifest(f);
  const auto &variants = m.find("spec")->find("buildVariants")->as_array();
  REQUIRE(variants.size() == 1);
  CHECK(variants[0].find("install")->find("package")->as_string() == "liger-kernel");
  CHECK(variants[0].find("requirements")->find("torch")->as_string() == "2.11.0");
  // Another torch is another revision.
  RevisionFacts other = f;
  other.package->requirements["torch"] = "2.10.0";
  CHECK(manifest_digest(m) != manifest_digest(implementation_manifest(other)));
}

TEST_CASE("implementation_manifest refuses facts outside the schema, naming the field", "[manifest]") {
  const auto refuses = [](RevisionFacts f, const char *field) {
    try {
      (void)implementation_manifest(f);
      FAIL("accepted");
    } catch (const InputError &e) {
      CHECK_THAT(e.what(), Catch::Contains(field));
    }
  };
  RevisionFacts f = valid_facts();
  f.name = "Mine";
  refuses(f, "metadata.name");
  f = valid_facts();
  f.source.commit = "abc";
  refuses(f, "spec.projectRevision.commit");
  f = valid_facts();
  f.source.version.clear();
  refuses(f, "spec.projectRevision.version");
  f = valid_facts();
  f.operation_digest = "md5:00";
  refuses(f, "spec.operation.specDigest");
  f = valid_facts();
  f.language = "C++";
  refuses(f, "spec.callable.language");
  f = valid_facts();
  f.labels["Bad-Key"] = "x";
  refuses(f, "metadata.labels");
}

TEST_CASE("the build records its source: a tree digest always, a commit from a checkout", "[manifest]") {
  const BuildSource &source = build_source();
  CHECK(source.revision.version == KIBENCH_VERSION);
  CHECK(std::regex_match(source.revision.tree_digest, std::regex("^sha256:[0-9a-f]{64}$")));
  CHECK(std::regex_match(source.revision.commit, std::regex("^([0-9a-f]{40})?$")));
  if (std::filesystem::exists(kibench::test::source_dir() / ".git"))
    CHECK_FALSE(source.revision.commit.empty());
}

TEST_CASE("every built-in implementation declares kibench's licence, Apache-2.0", "[manifest][licence]") {
  // What KernelIndex reads (spec.licensing.declared): without it a revision
  // shows as "unknown", never as usable.
  REQUIRE_FALSE(implementation_registry().empty());
  for (const auto &entry : implementation_registry()) {
    const auto impl = entry.make();
    for (const auto kind : {operation_named("distill_jsd_loss"), operation_named("jsd"), operation_named("fused_linear_jsd")}) {
      if (!impl->runs(kind)) continue;
      INFO(entry.name << " " << to_string(kind));
      const RevisionFacts facts = impl->revision_for(kind);
      CHECK(facts.licence == "Apache-2.0");
      const json::Value m = implementation_manifest(facts);
      const json::Value *declared = json::member_at(m, "spec.licensing.declared");
      REQUIRE(declared != nullptr);
      CHECK(declared->as_string() == "Apache-2.0");
    }
    INFO(entry.name);
    CHECK(impl->revision().licence == "Apache-2.0");
  }
}

TEST_CASE("every registered implementation's revision is valid and names a file that exists", "[manifest]") {
  for (const auto &entry : implementation_registry()) {
    const auto impl = entry.make();
    std::size_t operations = 0;
    // One revision per operation it computes, each naming that operation.
    for (const auto kind : {operation_named("distill_jsd_loss"), operation_named("jsd"), operation_named("fused_linear_jsd")}) {
      if (!impl->runs(kind)) continue;
      ++operations;
      INFO(entry.name << " " << to_string(kind));
      const RevisionFacts facts = impl->revision_for(kind);
      const json::Value m = implementation_manifest(facts);
      CHECK(m.find("metadata")->find("name")->as_string() == "kibench-" + entry.name);
      CHECK(std::filesystem::is_regular_file(kibench::test::source_dir() / facts.source_path));
      CHECK(facts.source.tree_digest == build_source().revision.tree_digest);
      CHECK(facts.operation_digest == kind->digest());
    }
    CHECK(operations >= 1);
    // The revision without an operation is the first one's: distill_jsd_loss's where it computes it.
    if (impl->runs(operation_named("distill_jsd_loss")))
      CHECK(impl->revision().operation_digest == kDistillJsdLossOperationDigest);
  }
}
