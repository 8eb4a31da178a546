#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/parse.hpp"
#include "test/source_tree.hpp"

using Catch::Matchers::Contains;
using kibench::canonical_digest;
using kibench::manifest_digest;
using kibench::sha256_digest;
using kibench::json::parse;
using kibench::json::parse_file;

namespace {

const std::filesystem::path kSeedRecord =
    kibench::test::test_data_dir() / "seed" / "seed-record.json";

std::string spec_string(const kibench::json::Value &manifest, const char *field) {
  return manifest.find("spec")->find(field)->as_string();
}

} // namespace

TEST_CASE("sha256 digests of bytes", "[digest]") {
  // FIPS 180-2 test vectors.
  CHECK(sha256_digest("") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_digest("abc") == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_digest(std::string_view("a\0b", 3)) != sha256_digest("ab"));
}

TEST_CASE("canonical_digest hashes the JCS text itself", "[digest]") {
  CHECK(canonical_digest(parse(R"({"b": 1, "a": [1.0, "x"]})", "t")) ==
        sha256_digest(R"({"a":[1,"x"],"b":1})"));
}

TEST_CASE("the SoftwareProject vector: any metadata, any key order", "[digest]") {
  const std::string expected = "sha256:bea60af06f12216679b113d6624c5293d59bef2104ccc27cd33c992d124e039d";
  CHECK(
      manifest_digest(parse(
          R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"SoftwareProject","spec":{"name":"Vector Project","repository":"https://example.invalid/vector/project"}})",
          "vector")) == expected);
  CHECK(manifest_digest(parse(R"({
      "metadata": {"name": "vector-project", "title": "Any title", "labels": {"team": "x"}},
      "spec": {"repository": "https://example.invalid/vector/project", "name": "Vector Project"},
      "kind": "SoftwareProject",
      "apiVersion": "kernelindex.dev/v1alpha1"
    })",
                              "shuffled")) == expected);
  // The spec is identity: one character changes the digest.
  CHECK(
      manifest_digest(parse(
          R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"SoftwareProject","spec":{"name":"Vector project","repository":"https://example.invalid/vector/project"}})",
          "changed")) != expected);
}

TEST_CASE("a manifest without apiVersion, kind or spec has no digest", "[digest]") {
  CHECK_THROWS_WITH(manifest_digest(parse(R"({"apiVersion": "v", "kind": "K"})", "t")), Contains("\"spec\""));
  CHECK_THROWS_WITH(manifest_digest(parse(R"({"apiVersion": "v", "spec": {}})", "t")), Contains("\"kind\""));
  CHECK_THROWS_WITH(manifest_digest(parse(R"({"kind": "K", "spec": {}})", "t")), Contains("\"apiVersion\""));
  CHECK_THROWS_AS(manifest_digest(parse("[]", "t")), kibench::InputError);
}

TEST_CASE("the seed record's digests", "[digest][seed]") {
  const auto record = parse_file(kSeedRecord);
  const auto &run = *record.find("run");
  CHECK(manifest_digest(*record.find("protocol")) == spec_string(run, "protocolDigest"));
  CHECK(manifest_digest(*record.find("environment")) == spec_string(run, "environmentDigest"));
  CHECK(spec_string(run, "protocolDigest") ==
        "sha256:5b02ee9a2140fbc6fcc1c89800f6c177ba22718c8897cb532bf0ba91867c1e58");
  CHECK(spec_string(run, "environmentDigest") ==
        "sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393");
  // The record page shows the run's own digest abbreviated.
  CHECK_THAT(manifest_digest(run), Catch::Matchers::StartsWith("sha256:04bb56fcc59a16aba8848d8"));
}

TEST_CASE("the committed seed record is the one the seed page embeds", "[digest][seed]") {
  // The page holds the manifest between "Show manifest" and the next
  // top-level closing brace.
  std::ifstream page(kibench::test::test_data_dir() / "seed" / "000_35d0718ed19ba77a.txt");
  REQUIRE(page);
  std::string line, embedded;
  bool after_marker = false, inside = false;
  while (std::getline(page, line)) {
    if (line == "Show manifest") after_marker = true;
    if (after_marker && line == "{") inside = true;
    if (inside) embedded += line + "\n";
    if (inside && line == "}") break;
  }
  CHECK(parse(embedded, "seed page") == parse_file(kSeedRecord));
}

TEST_CASE("the Liger seed row's canonical bodies hash to what the seed run references", "[digest][seed]") {
  const auto bodies =
      parse_file(kibench::test::test_data_dir() / "liger" / "seed-row-canonical-manifests.json");
  const auto seed_run = *parse_file(kSeedRecord).find("run");
  const auto &run = *bodies.find("BenchmarkRun");
  const auto &workload = *bodies.find("WorkloadCase");
  const auto &operation = *bodies.find("OperationSpec");

  CHECK(manifest_digest(workload) == spec_string(seed_run, "workloadDigest"));
  CHECK(manifest_digest(*bodies.find("ImplementationRevision")) ==
        spec_string(seed_run, "implementationDigest"));
  CHECK(manifest_digest(*bodies.find("BenchmarkProtocol")) == spec_string(seed_run, "protocolDigest"));
  CHECK(manifest_digest(*bodies.find("ExecutionEnvironment")) == spec_string(seed_run, "environmentDigest"));
  CHECK(manifest_digest(operation) == spec_string(workload, "operationSpecDigest"));
  // The canonical body and the page's run (with metadata) share one identity.
  CHECK(manifest_digest(run) == manifest_digest(seed_run));

  const kibench::ComparisonKeyParts parts{
      .operation = manifest_digest(operation),
      .workload = manifest_digest(workload),
      .protocol = spec_string(seed_run, "protocolDigest"),
      .environment = spec_string(seed_run, "environmentDigest"),
      .correctness = *workload.find("spec")->find("correctness"),
  };
  // The comparison key the seed page abbreviates and the liger README spells out.
  CHECK(kibench::comparison_key(parts) ==
        "sha256:8211ca496bad5543154be868e1b5b003b7bc18e15a029924f3340435be62ea72");

  auto other_metric = parts;
  other_metric.metric = "latency:mean:ns";
  CHECK(kibench::comparison_key(other_metric) != kibench::comparison_key(parts));
}
