#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "lib/digest/manifest_set.hpp"
#include "lib/digest/verify.hpp"
#include "lib/error.hpp"
#include "test/test_digest_support.hpp"
#include "test/source_tree.hpp"

using Catch::Matchers::Contains;
using kibench::ManifestOrigin;
using kibench::ManifestSet;
using kibench::VerifyReport;
using namespace kibench::test;

namespace {

const std::filesystem::path kSeedRecord =
    kibench::test::test_data_dir() / "seed" / "seed-record.json";

const kibench::ManifestVerification &report_for(const VerifyReport &report, std::string_view label_suffix) {
  const auto it = std::find_if(report.manifests.begin(), report.manifests.end(),
                               [&](const auto &m) { return m.label.ends_with(label_suffix); });
  REQUIRE(it != report.manifests.end());
  return *it;
}

VerifyReport verify_directory(const std::filesystem::path &directory) {
  ManifestSet set;
  set.add_directory(directory);
  return kibench::verify(set);
}

// Replaces the first occurrence of `from` in a file.
void edit_file(const std::filesystem::path &file, std::string_view from, std::string_view to) {
  std::string text = kibench::test::read_text(file);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  write_text(file, text);
}

} // namespace

TEST_CASE("a file of one manifest, an array, or an object of manifests", "[digest][manifest-set]") {
  ScratchDirectory scratch("manifest-set");
  const auto bodies = kibench::json::parse_file(kibench::test::liger_seed_row_file());

  ManifestSet object_set;
  object_set.add_file(kibench::test::liger_seed_row_file());
  REQUIRE(object_set.entries().size() == 7);
  CHECK(object_set.entries()[0].label.ends_with("seed-row-canonical-manifests.json#OperationSpec"));
  CHECK(object_set.entries()[0].kind == "OperationSpec");

  kibench::json::Array pair{*bodies.find("BenchmarkProtocol"), *bodies.find("ExecutionEnvironment")};
  write_text(scratch / "pair.json", kibench::json::canonical(kibench::json::Value(pair)));
  ManifestSet array_set;
  array_set.add_file(scratch / "pair.json");
  REQUIRE(array_set.entries().size() == 2);
  CHECK(array_set.entries()[1].label == (scratch / "pair.json").string() + "#1");
  CHECK(array_set.entries()[1].kind == "ExecutionEnvironment");
  CHECK(array_set.entries()[1].digest ==
        "sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393");

  ManifestSet seed_set;
  seed_set.add_file(kSeedRecord);
  REQUIRE(seed_set.entries().size() == 3);
  CHECK(seed_set.entries()[0].label.ends_with("seed-record.json#run"));
  CHECK(seed_set.entries()[0].name.starts_with("liger-distill-jsd-loss-full-torch"));
  // Named twice, read once.
  seed_set.add_file(kSeedRecord);
  CHECK(seed_set.entries().size() == 3);
}

TEST_CASE("files named explicitly must hold manifests", "[digest][manifest-set]") {
  ScratchDirectory scratch("manifest-set-bad");
  write_text(scratch / "samples.json", R"({"samples": [1, 2, 3]})");
  write_text(scratch / "broken.json", R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": )");
  write_text(scratch / "no-spec.json",
             R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "WorkloadCase"})");
  ManifestSet set;
  CHECK_THROWS_WITH(set.add_file(scratch / "samples.json"), Contains("samples.json: not a manifest"));
  CHECK_THROWS_WITH(set.add_file(scratch / "broken.json"), Contains("broken.json: $: invalid JSON"));
  CHECK_THROWS_WITH(set.add_file(scratch / "no-spec.json"),
                    Contains("no-spec.json: manifest has no \"spec\""));
  CHECK_THROWS_AS(set.add_file(scratch / "absent.json"), kibench::InputError);
}

TEST_CASE("a complete run directory verifies and yields its comparison key", "[digest][verify]") {
  ScratchDirectory scratch("verify-good");
  kibench::test::write_seed_row_run_directory(scratch.path());
  ManifestSet set;
  set.add_directory(scratch.path());
  // samples.torch.json is JSON but no manifest: skipped.
  CHECK(set.entries().size() == 6);
  const VerifyReport report = kibench::verify(set);
  CHECK(report.ok());
  CHECK(report.failures().empty());
  // The run, the workload and the implementation are checked.
  CHECK(report.manifests.size() == 3);
  const auto &run = report_for(report, "run.torch.json");
  CHECK(run.notes.empty());
  REQUIRE(run.comparison_key.has_value());
  CHECK(*run.comparison_key == kibench::test::kSeedRowComparisonKey);
  CHECK(report_for(report, "workload.json").ok());
  CHECK(report_for(report, "implementation.torch.json").ok());
}

TEST_CASE("a changed byte in a referenced spec fails naming the field", "[digest][verify]") {
  ScratchDirectory scratch("verify-protocol");
  kibench::test::write_seed_row_run_directory(scratch.path());
  edit_file(scratch / "protocol.json", "cuda_events", "cuda_eventz");
  const VerifyReport report = verify_directory(scratch.path());
  CHECK_FALSE(report.ok());
  const auto failures = report.failures();
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0], Contains("run.torch.json: spec.protocolDigest: "
                                   "sha256:5b02ee9a2140fbc6fcc1c89800f6c177ba22718c8897cb532bf0ba91867c1e58 "
                                   "does not match "));
  CHECK_THAT(failures[0], Contains("protocol.json (sha256:"));
  // Without a matching protocol there is no cohort.
  CHECK_FALSE(report_for(report, "run.torch.json").comparison_key.has_value());
}

TEST_CASE("metadata edits keep every digest valid", "[digest][verify]") {
  ScratchDirectory scratch("verify-metadata");
  kibench::test::write_seed_row_run_directory(scratch.path());
  edit_file(scratch / "protocol.json", "\"apiVersion\"",
            "\"metadata\": {\"name\": \"renamed\"},\n  \"apiVersion\"");
  CHECK(verify_directory(scratch.path()).ok());
}

TEST_CASE("a workload whose operation changed fails on operationSpecDigest", "[digest][verify]") {
  ScratchDirectory scratch("verify-operation");
  kibench::test::write_seed_row_run_directory(scratch.path());
  edit_file(scratch / "operation.json", "\"unspecified\"", "\"deterministic\"");
  const VerifyReport report = verify_directory(scratch.path());
  CHECK_FALSE(report.ok());
  CHECK_THAT(
      report_for(report, "workload.json").failures.at(0),
      Contains("workload.json: spec.operationSpecDigest: "
               "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5 does not match"));
  CHECK_THAT(report_for(report, "implementation.torch.json").failures.at(0),
             Contains("spec.operation.specDigest"));
  // The run's own references still hold.
  CHECK(report_for(report, "run.torch.json").ok());
}

TEST_CASE("a changed raw-samples file fails", "[digest][verify]") {
  ScratchDirectory scratch("verify-samples");
  kibench::test::write_seed_row_run_directory(scratch.path());
  edit_file(scratch / "samples.torch.json", "213160001", "213160002");
  const auto failures = verify_directory(scratch.path()).failures();
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0], Contains("run.torch.json: spec.timing.rawSamples.digest: sha256:"));
  CHECK_THAT(failures[0], Contains("does not match samples.torch.json (sha256:"));

  std::filesystem::remove(scratch / "samples.torch.json");
  const auto missing = verify_directory(scratch.path()).failures();
  REQUIRE(missing.size() == 1);
  CHECK_THAT(missing[0], Contains("spec.timing.rawSamples.uri: cannot read"));
}

TEST_CASE("a run directory must hold every manifest its runs reference", "[digest][verify]") {
  ScratchDirectory scratch("verify-incomplete");
  kibench::test::write_seed_row_run_directory(scratch.path());
  std::filesystem::remove(scratch / "workload.json");
  const auto failures = verify_directory(scratch.path()).failures();
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0], Contains("run.torch.json: spec.workloadDigest: sha256:517aa906"));
  CHECK_THAT(failures[0], Contains("no WorkloadCase in the run directory"));
}

TEST_CASE("a lone record notes the kinds it lacks and checks the rest", "[digest][verify][seed]") {
  ManifestSet set;
  set.add_file(kSeedRecord);
  set.add_beside(kSeedRecord);
  const VerifyReport report = kibench::verify(set);
  CHECK(report.ok());
  REQUIRE(report.manifests.size() == 1);
  const auto &run = report.manifests[0];
  CHECK(run.label.ends_with("seed-record.json#run"));
  CHECK(std::any_of(run.notes.begin(), run.notes.end(), [](const std::string &note) {
    return note.find("spec.workloadDigest") != std::string::npos &&
           note.find("not present") != std::string::npos;
  }));
  CHECK(std::any_of(run.notes.begin(), run.notes.end(), [](const std::string &note) {
    return note.find("spec.implementationDigest") != std::string::npos;
  }));
  CHECK_FALSE(run.comparison_key.has_value());
}

TEST_CASE("a lone run is checked against the manifests beside it", "[digest][verify]") {
  ScratchDirectory scratch("verify-beside");
  kibench::test::write_seed_row_run_directory(scratch.path());
  ManifestSet set;
  set.add_file(scratch / "run.torch.json");
  set.add_beside(scratch / "run.torch.json");
  CHECK(std::count_if(set.entries().begin(), set.entries().end(),
                      [](const auto &e) { return e.origin == ManifestOrigin::beside; }) == 5);
  const VerifyReport good = kibench::verify(set);
  CHECK(good.ok());
  CHECK(report_for(good, "run.torch.json").comparison_key ==
        std::string(kibench::test::kSeedRowComparisonKey));

  // A neighbour of the referenced kind with another digest is a failure.
  edit_file(scratch / "environment.json", "sm_90", "sm_89");
  ManifestSet changed;
  changed.add_file(scratch / "run.torch.json");
  changed.add_beside(scratch / "run.torch.json");
  const auto failures = kibench::verify(changed).failures();
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0], Contains("spec.environmentDigest"));
  CHECK_THAT(failures[0], Contains("environment.json"));
}

TEST_CASE("neighbours that are not valid JSON are skipped, not fatal", "[digest][verify]") {
  ScratchDirectory scratch("verify-beside-bad");
  std::filesystem::copy_file(kSeedRecord, scratch / "seed-record.json");
  write_text(scratch / "notes.json", "{ not json");
  ManifestSet set;
  set.add_file(scratch / "seed-record.json");
  set.add_beside(scratch / "seed-record.json");
  REQUIRE(set.skipped().size() == 1);
  CHECK_THAT(set.skipped()[0], Contains("notes.json"));
  CHECK(kibench::verify(set).ok());
}

TEST_CASE("the Liger seed row's object of manifests verifies as a whole", "[digest][verify]") {
  ManifestSet set;
  set.add_file(kibench::test::liger_seed_row_file());
  const VerifyReport report = kibench::verify(set);
  CHECK(report.ok());
  const auto &run = report_for(report, "#BenchmarkRun");
  CHECK(run.notes.empty());
  CHECK(run.comparison_key == std::string(kibench::test::kSeedRowComparisonKey));
}
