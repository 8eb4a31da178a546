// `kibench import liger` end to end, against KernelIndex's published record
// of the seed row (test/data/seed/seed-record.json, the manifest its record page embeds)
// and its canonical identity bodies (test/data/liger/seed-row-canonical-
// manifests.json): every digest is computed here from what the importer
// wrote, then compared with the published value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/digest/digest.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

const fs::path kTestData = kibench::test::test_data_dir();
const fs::path kRowsCsv = kTestData / "liger" / "jsd-family-rows.csv";

// What the seed record (KernelIndex run 01a0202b) prints.
constexpr const char *kSeedRunName =
    "liger-distill-jsd-loss-full-torch-nvidia-h100-80gb-hbm3-hidden4096-tokens8192-vocab128256-bf16-2024-";
constexpr const char *kSeedExternalId = "distill_jsd_loss/full/torch/nvidia-h100-80gb-hbm3/"
                                        "hidden4096-tokens8192-vocab128256-bf16/2024-12-03-08-00-25";
constexpr const char *kSeedComparisonKey =
    "sha256:8211ca496bad5543154be868e1b5b003b7bc18e15a029924f3340435be62ea72";
constexpr const char *kSeedRunDigestPrefix = "sha256:04bb56fcc59a16aba8848d8";
constexpr const char *kSeedProtocolDigest =
    "sha256:5b02ee9a2140fbc6fcc1c89800f6c177ba22718c8897cb532bf0ba91867c1e58";
constexpr const char *kSeedWorkloadDigest =
    "sha256:517aa9063603db73b93c3dc57b38a584c48f4988426eade5cd0de1216f25b094";
constexpr const char *kSeedEnvironmentDigest =
    "sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393";
constexpr const char *kSeedImplementationDigest =
    "sha256:7f1248e6e0aaddc0af487dbc9d280632c701b28f9bce8b6a3bb19e06bc2cd48d";
constexpr const char *kDistillOperationDigest =
    "sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5";

const std::vector<std::string> kRecordFiles{"run.json",      "workload.json",    "operation.json",
                                            "protocol.json", "environment.json", "implementation.json",
                                            "project.json"};

kibench::json::Value manifest_at(const fs::path &file) {
  return kibench::json::parse_file(file);
}

const kibench::json::Value &at(const kibench::json::Value &value,
                               std::initializer_list<std::string_view> path) {
  const kibench::json::Value *current = &value;
  for (const std::string_view key : path) {
    current = current->find(key);
    INFO("member " << key);
    REQUIRE(current != nullptr);
  }
  return *current;
}

std::string canonical_of(const kibench::json::Value &value) {
  return kibench::json::canonical(value);
}

// The identity body, {apiVersion, kind, spec}, of a manifest.
std::string identity_body(const kibench::json::Value &manifest) {
  return canonical_of(kibench::json::Object{{"apiVersion", at(manifest, {"apiVersion"})},
                                            {"kind", at(manifest, {"kind"})},
                                            {"spec", at(manifest, {"spec"})}});
}

kibench::test::ProcessResult import_rows(const fs::path &csv, const fs::path &out,
                                         const std::string &flags = "") {
  return run_kibench("import liger " + quoted(csv) + " --out " + quoted(out) +
                     (flags.empty() ? "" : " " + flags));
}

// Every regular file under `root`, relative path -> bytes.
std::map<std::string, std::string> tree_of(const fs::path &root) {
  std::map<std::string, std::string> files;
  for (const auto &entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), root).string()] = read_text(entry.path());
  }
  return files;
}

std::vector<std::string> directories_in(const fs::path &root) {
  std::vector<std::string> names;
  if (!fs::exists(root)) return names;
  for (const auto &entry : fs::directory_iterator(root)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Lines of the shared CSV (CRLF, as upstream writes it): the header and the
// seed row, for building small CSVs with one thing wrong.
struct RowsCsv {
  std::string header;
  std::string seed_row;
  std::string sibling_row; // same kernel, mode and case, provider liger
};

RowsCsv rows_csv() {
  const std::string text = read_text(kRowsCsv);
  RowsCsv rows;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find("\r\n", start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (rows.header.empty()) rows.header = line;
    if (line.starts_with("distill_jsd_loss,torch,full,speed,ms,BT,B x T,8192,")) rows.seed_row = line;
    if (line.starts_with("distill_jsd_loss,liger,full,speed,ms,BT,B x T,8192,")) rows.sibling_row = line;
    start = end + 2;
  }
  REQUIRE_FALSE(rows.seed_row.empty());
  REQUIRE_FALSE(rows.sibling_row.empty());
  return rows;
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  const std::size_t at_pos = text.find(from);
  REQUIRE(at_pos != std::string::npos);
  return text.replace(at_pos, from.size(), to);
}

fs::path write_csv(const TempDir &dir, const std::string &name, const std::vector<std::string> &lines) {
  std::string text;
  for (const auto &line : lines) text += line + "\r\n";
  const fs::path path = dir.path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::size_t skipped_count(const kibench::json::Value &summary, std::string_view reason) {
  return static_cast<std::size_t>(at(summary, {"skipped", reason}).as_int());
}

} // namespace

TEST_CASE("importing the JSD-family rows reproduces every value of the seed record", "[import][seed]") {
  TempDir dir;
  const fs::path out = dir.path() / "imported";
  const auto result = import_rows(kRowsCsv, out);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);

  const fs::path seed_dir = out / kSeedRunName;
  REQUIRE(fs::is_directory(seed_dir));
  for (const auto &file : kRecordFiles) CHECK(fs::is_regular_file(seed_dir / file));

  const auto run = manifest_at(seed_dir / "run.json");
  const auto workload = manifest_at(seed_dir / "workload.json");
  const auto operation = manifest_at(seed_dir / "operation.json");
  const auto protocol = manifest_at(seed_dir / "protocol.json");
  const auto environment = manifest_at(seed_dir / "environment.json");
  const auto implementation = manifest_at(seed_dir / "implementation.json");

  // Digests, computed from the files written.
  CHECK(kibench::manifest_digest(workload) == kSeedWorkloadDigest);
  CHECK(kibench::manifest_digest(protocol) == kSeedProtocolDigest);
  CHECK(kibench::manifest_digest(environment) == kSeedEnvironmentDigest);
  CHECK(kibench::manifest_digest(implementation) == kSeedImplementationDigest);
  CHECK(kibench::manifest_digest(operation) == kDistillOperationDigest);
  CHECK(kibench::manifest_digest(run).starts_with(kSeedRunDigestPrefix));
  CHECK(kibench::comparison_key({.operation = kibench::manifest_digest(operation),
                                 .workload = kibench::manifest_digest(workload),
                                 .protocol = kibench::manifest_digest(protocol),
                                 .environment = kibench::manifest_digest(environment),
                                 .correctness = at(workload, {"spec", "correctness"})}) ==
        kSeedComparisonKey);

  // The run references what lies beside it.
  CHECK(at(run, {"spec", "workloadDigest"}).as_string() == kSeedWorkloadDigest);
  CHECK(at(run, {"spec", "protocolDigest"}).as_string() == kSeedProtocolDigest);
  CHECK(at(run, {"spec", "environmentDigest"}).as_string() == kSeedEnvironmentDigest);
  CHECK(at(run, {"spec", "implementationDigest"}).as_string() == kSeedImplementationDigest);

  // Values the seed page prints.
  CHECK(at(run, {"metadata", "name"}).as_string() == kSeedRunName);
  CHECK(at(run, {"metadata", "title"}).as_string() == "Chunked distillation JSD loss · torch · full");
  CHECK(at(run, {"metadata", "labels", "liger_version"}).as_string() == "0.4.2");
  CHECK(at(run, {"spec", "status"}).as_string() == "passed");
  CHECK(at(run, {"spec", "observedAt"}).as_string() == "2024-12-03T08:00:25.000Z");
  CHECK(at(run, {"spec", "sourceNative", "externalId"}).as_string() == kSeedExternalId);
  CHECK(at(run, {"spec", "timing", "latencyNs", "median"}).as_number() == 213159866);
  CHECK(canonical_of(at(run, {"spec", "measurements"})) ==
        R"([{"metric":"latency","statistic":"p20","unit":"ns","value":213159866},)"
        R"({"metric":"latency","statistic":"p80","unit":"ns","value":213159866}])");
  CHECK(canonical_of(at(run, {"spec", "sourceNative"})) ==
        R"({"benchmark":"distill_jsd_loss/full","externalId":")" + std::string(kSeedExternalId) +
            R"(","metrics":{"ms_20":213.1598663330078,"ms_50":213.1598663330078,"ms_80":213.1598663330078},)"
            R"("source":"liger-kernel-bench"})");

  // The whole record page: run, protocol and environment as published,
  // metadata included.
  const auto seed_record = manifest_at(kTestData / "seed" / "seed-record.json");
  CHECK(canonical_of(run) == canonical_of(at(seed_record, {"run"})));
  CHECK(canonical_of(protocol) == canonical_of(at(seed_record, {"protocol"})));
  CHECK(canonical_of(environment) == canonical_of(at(seed_record, {"environment"})));

  // Every identity body as KernelIndex canonicalized it for this row.
  const auto canonical_bodies = manifest_at(kTestData / "liger" / "seed-row-canonical-manifests.json");
  const std::map<std::string, std::string> file_of_kind{{"OperationSpec", "operation.json"},
                                                        {"WorkloadCase", "workload.json"},
                                                        {"SoftwareProject", "project.json"},
                                                        {"ImplementationRevision", "implementation.json"},
                                                        {"BenchmarkProtocol", "protocol.json"},
                                                        {"ExecutionEnvironment", "environment.json"},
                                                        {"BenchmarkRun", "run.json"}};
  REQUIRE(canonical_bodies.as_object().size() == file_of_kind.size());
  for (const auto &[kind, body] : canonical_bodies.as_object()) {
    INFO(kind);
    CHECK(identity_body(manifest_at(seed_dir / file_of_kind.at(kind))) == canonical_of(body));
  }
}

TEST_CASE("the import summary counts every row", "[import]") {
  TempDir dir;
  const auto result = import_rows(kRowsCsv, dir.path() / "out", "--json");
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty()); // no problem rows, no notes
  const auto summary = kibench::json::parse(result.out, "summary");
  // 116 rows: 36 memory rows, 80 speed rows of the three kernels.
  CHECK(at(summary, {"rowsRead"}).as_int() == 116);
  CHECK(at(summary, {"imported"}).as_int() == 80);
  CHECK(skipped_count(summary, "memory_row") == 36);
  for (const auto reason : {"other_kernel", "duplicate", "non_finite", "unknown_gpu", "unknown_provider",
                            "did_not_bind", "name_collision", "malformed"})
    CHECK(skipped_count(summary, reason) == 0);
  CHECK(directories_in(dir.path() / "out").size() == 80);

  // The seed row's entry, and its liger sibling: implementations are what a
  // cohort compares, so both share the seed's comparison key.
  std::map<std::string, std::string> key_by_external_id;
  for (const auto &run : at(summary, {"runs"}).as_array())
    key_by_external_id[at(run, {"externalId"}).as_string()] = at(run, {"comparisonKey"}).as_string();
  CHECK(key_by_external_id.at(kSeedExternalId) == kSeedComparisonKey);
  CHECK(key_by_external_id.at("distill_jsd_loss/full/liger/nvidia-h100-80gb-hbm3/"
                              "hidden4096-tokens8192-vocab128256-bf16/2024-12-03-07-59-51") ==
        kSeedComparisonKey);
  // Another pass is another cohort.
  CHECK(key_by_external_id.at("distill_jsd_loss/forward/torch/nvidia-h100-80gb-hbm3/"
                              "hidden4096-tokens8192-vocab128256-bf16/2024-12-03-07-59-18") !=
        kSeedComparisonKey);
  // Siblings of other kernels bind their own cases.
  CHECK(key_by_external_id.contains(
      "jsd/forward/liger/nvidia-h100-pcie/tokens8192-vocab4096-fp32/2024-10-02-16-21-37"));
  CHECK(key_by_external_id.contains(
      "jsd/backward/torch/nvidia-b200/tokens1024-vocab128256-fp32/2026-05-27-17-14-30"));
  CHECK(key_by_external_id.contains("fused_linear_jsd/full/torch/nvidia-h100-80gb-hbm3/"
                                    "hidden4096-tokens8192-vocab128256-bf16/2024-10-09-12-29-27"));
}

TEST_CASE("an imported fused_linear_jsd row carries beta and the row's dtype", "[import]") {
  TempDir dir;
  const auto result = import_rows(kRowsCsv, dir.path() / "out", "--json");
  REQUIRE(result.exit_code == 0);
  const auto summary = kibench::json::parse(result.out, "summary");
  const std::string external_id = "fused_linear_jsd/forward/liger/nvidia-h100-80gb-hbm3/"
                                  "hidden4096-tokens1024-vocab128256-bf16/2024-10-09-12-29-18";
  fs::path directory;
  for (const auto &run : at(summary, {"runs"}).as_array()) {
    if (at(run, {"externalId"}).as_string() == external_id) directory = at(run, {"directory"}).as_string();
  }
  REQUIRE_FALSE(directory.empty());
  const auto run = manifest_at(directory / "run.json");
  CHECK(at(run, {"metadata", "name"}).as_string().size() == 100);
  CHECK(at(run, {"spec", "timing", "latencyNs", "median"}).as_number() == 110021858); // 110.02185821533203 ms
  const auto workload = manifest_at(directory / "workload.json");
  CHECK(
      canonical_of(at(workload, {"spec"})) ==
      R"({"axes":{"hidden":4096,"tokens":1024,"vocab":128256},"correctness":{"comparator":"not_asserted"},)"
      R"("operationSpecDigest":"sha256:71138de338d4a1a85e751a2db3bd1a1c08f93a234a9ab0cfd9c5ab35eb180b72",)"
      R"("scalars":{"beta":{"dtype":"fp32","value":0.5}},"tensors":{)"
      R"("student_input":{"dtype":"bf16","shape":[1024,4096]},"student_weight":{"dtype":"bf16","shape":[128256,4096]},)"
      R"("teacher_input":{"dtype":"bf16","shape":[1024,4096]},"teacher_weight":{"dtype":"bf16","shape":[128256,4096]}}})");
}

TEST_CASE("imports are deterministic: two imports write byte-identical files", "[import]") {
  TempDir dir;
  REQUIRE(import_rows(kRowsCsv, dir.path() / "first").exit_code == 0);
  REQUIRE(import_rows(kRowsCsv, dir.path() / "second").exit_code == 0);
  const auto first = tree_of(dir.path() / "first");
  CHECK(first.size() == 80 * kRecordFiles.size());
  CHECK(first == tree_of(dir.path() / "second"));
}

TEST_CASE("every imported manifest validates against the KernelIndex schemas", "[import][schema]") {
  TempDir dir;
  REQUIRE(import_rows(kRowsCsv, dir.path() / "out").exit_code == 0);
  const fs::path source = kibench::test::source_dir();
  const auto result =
      run_command("/usr/bin/python3 " + quoted(source / "test" / "schema" / "validate.py") + " " +
                  quoted(kTestData / "kernelindex" / "schemas") + " " + quoted(dir.path() / "out"));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.out, Contains("560 manifests checked, 0 problems"));
}

TEST_CASE("kibench digest --verify accepts every imported directory", "[import][digest]") {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  REQUIRE(import_rows(kRowsCsv, out).exit_code == 0);

  const auto seed = run_kibench("digest --verify " + quoted(out / kSeedRunName));
  INFO(seed.out << seed.err);
  CHECK(seed.exit_code == 0);
  CHECK_THAT(seed.out, Contains(std::string("comparison key  ") + kSeedComparisonKey));
  CHECK_THAT(seed.out, !Contains("FAILED") && !Contains("note"));

  for (const auto &name : directories_in(out)) {
    const auto verified = run_kibench("digest --verify " + quoted(out / name));
    INFO(name << "\n" << verified.out << verified.err);
    CHECK(verified.exit_code == 0);
    CHECK_THAT(verified.out, Contains("comparison key  sha256:"));
  }
}

TEST_CASE("a missing column refuses the file: exit 2, nothing written", "[import][malformed]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  const fs::path csv =
      write_csv(dir, "no-gpu.csv", {replaced(rows.header, "gpu_name", "gpu"), rows.seed_row});
  const auto result = import_rows(csv, dir.path() / "out");
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Contains(csv.string() + ":1: header: missing column \"gpu_name\""));
  CHECK_FALSE(fs::exists(dir.path() / "out"));
}

TEST_CASE("bad rows are reported by line and skipped, the others import", "[import][malformed]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  const std::string config =
      R"("{""H"": 4096, ""V"": 128256, ""mode"": ""forward"", ""dtype"": ""torch.bfloat16"", )"
      R"(""bias"": false, ""weight_hard_loss"": 0.5, ""weight_soft_loss"": 0.5, )"
      R"(""ignore_index"": -100}")";
  const fs::path csv =
      write_csv(dir, "rows.csv",
                {rows.header,
                 rows.sibling_row,                                                             // line 2: fine
                 replaced(rows.seed_row, "8192,213.1598663330078,", "8192,21x3,"),             // line 3
                 replaced(rows.seed_row, config, R"("{""H"": 4096, ""V"": }")"),               // line 4
                 replaced(rows.seed_row, "NVIDIA H100 80GB HBM3", "NVIDIA H200"),              // line 5
                 replaced(rows.seed_row, "full,speed,ms", "full,speed"),                       // line 6
                 replaced(rows.seed_row, "8192,213.1598663330078,", "8192,nan,"),              // line 7
                 replaced(rows.seed_row, R"(""bias"": false)", R"(""bias"": true)"),           // line 8
                 replaced(rows.seed_row, "distill_jsd_loss,torch", "distill_jsd_loss,triton"), // line 9
                 replaced(rows.seed_row, "2024-12-03 08:00:25", "2024-12-03 08:00"),           // line 10
                 rows.seed_row,                                                              // line 11: fine
                 rows.seed_row,                                                              // line 12: again
                 replaced(rows.seed_row, "distill_jsd_loss,torch", "cross_entropy,torch")}); // line 13
  const fs::path out = dir.path() / "out";
  const auto result = import_rows(csv, out, "--json");
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  const std::string at_line = csv.string() + ":";
  CHECK_THAT(result.err, Contains(at_line + "3: error: y_value_50: \"21x3\" is not a number"));
  CHECK_THAT(result.err, Contains(at_line + "4: error: extra_benchmark_config_str: $: invalid JSON"));
  CHECK_THAT(result.err, Contains(at_line + "5: error: unknown GPU \"NVIDIA H200\""));
  CHECK_THAT(result.err, Contains(at_line + "6: error: 14 fields, the header has 15"));
  CHECK_THAT(result.err, Contains(at_line + "7: note: y_value_50 is nan"));
  CHECK_THAT(result.err, Contains(at_line + "8: error: config \"bias\" is true"));
  CHECK_THAT(result.err, Contains(at_line + "9: error: unknown provider \"triton\""));
  CHECK_THAT(result.err, Contains(at_line + "10: error: timestamp: \"2024-12-03 08:00\""));
  CHECK_THAT(result.err, Contains(at_line + "12: note: duplicate of line 11"));
  CHECK_THAT(result.err,
             !Contains(at_line + "2:") && !Contains(at_line + "11:") && !Contains(at_line + "13:"));

  const auto summary = kibench::json::parse(result.out, "summary");
  CHECK(at(summary, {"rowsRead"}).as_int() == 12);
  CHECK(at(summary, {"imported"}).as_int() == 2);
  CHECK(skipped_count(summary, "malformed") == 4);
  CHECK(skipped_count(summary, "unknown_gpu") == 1);
  CHECK(skipped_count(summary, "unknown_provider") == 1);
  CHECK(skipped_count(summary, "did_not_bind") == 1);
  CHECK(skipped_count(summary, "non_finite") == 1);
  CHECK(skipped_count(summary, "duplicate") == 1);
  CHECK(skipped_count(summary, "other_kernel") == 1);
  CHECK(directories_in(out).size() == 2);
  CHECK(fs::is_regular_file(out / kSeedRunName / "run.json"));

  SECTION("--strict turns the bad rows into exit 2 with nothing written") {
    const fs::path strict_out = dir.path() / "strict";
    const auto strict = import_rows(csv, strict_out, "--strict");
    CHECK(strict.exit_code == 2);
    CHECK_THAT(strict.err, Contains(at_line + "3: error: y_value_50"));
    CHECK_THAT(strict.err, Contains("7 of 12 rows skipped for a problem"));
    CHECK_FALSE(fs::exists(strict_out));
  }
}

TEST_CASE("runs whose names agree in their first 100 characters cannot share a directory",
          "[import][malformed]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  // Same row a second later: another external id, but the name is cut
  // before the time of day.
  const fs::path csv = write_csv(
      dir, "later.csv",
      {rows.header, rows.seed_row, replaced(rows.seed_row, "2024-12-03 08:00:25", "2024-12-03 08:00:26")});
  const auto result = import_rows(csv, dir.path() / "out", "--json");
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.err,
             Contains(csv.string() + ":3: error: run name " + kSeedRunName + " is already line 2's"));
  const auto summary = kibench::json::parse(result.out, "summary");
  CHECK(at(summary, {"imported"}).as_int() == 1);
  CHECK(skipped_count(summary, "name_collision") == 1);
  CHECK(import_rows(csv, dir.path() / "strict", "--strict").exit_code == 2);
  CHECK_FALSE(fs::exists(dir.path() / "strict"));
}

TEST_CASE("with --strict, a file whose skips are all policy imports", "[import][malformed]") {
  TempDir dir;
  const auto result = import_rows(kRowsCsv, dir.path() / "out", "--strict");
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(directories_in(dir.path() / "out").size() == 80);
}

TEST_CASE("an import never overwrites: an existing run directory refuses it all", "[import][malformed]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  const fs::path out = dir.path() / "out";
  const fs::path first = write_csv(dir, "first.csv", {rows.header, rows.seed_row});
  REQUIRE(import_rows(first, out).exit_code == 0);
  const auto before = tree_of(out);

  const fs::path both = write_csv(dir, "both.csv", {rows.header, rows.sibling_row, rows.seed_row});
  const auto again = import_rows(both, out);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Contains((out / kSeedRunName).string() + ": already exists"));
  CHECK(tree_of(out) == before); // the sibling was not written either
}

TEST_CASE("the subcommand explains itself", "[import]") {
  const auto help = run_kibench("import liger --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("--strict") && Contains("--out") && Contains("Examples:"));
  const auto no_csv = run_kibench("import liger");
  CHECK(no_csv.exit_code == 2);
  const auto unreadable = run_kibench("import liger /nonexistent/rows.csv --out /nonexistent/out");
  CHECK(unreadable.exit_code == 2);
  CHECK_THAT(unreadable.err, Contains("/nonexistent/rows.csv: cannot read"));
}

TEST_CASE("a row whose x_value is not a finite number is skipped as malformed, naming file and line",
          "[import][malformed]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  // nan and 1e400 (read as inf) used to end the whole import with exit 3:
  // "inf cannot be written as JSON", no file, no line.
  const fs::path csv = write_csv(dir, "x-values.csv",
                                 {rows.header, replaced(rows.seed_row, "B x T,8192,", "B x T,nan,"),
                                  replaced(rows.seed_row, "B x T,8192,", "B x T,1e400,"), rows.sibling_row});
  const fs::path out = dir.path() / "out";
  const auto result = import_rows(csv, out, "--json");
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.err, Contains(csv.string() + ":2: error: x_value: \"nan\" is not a finite number"));
  CHECK_THAT(result.err, Contains(csv.string() + ":3: error: x_value: \"1e400\" is not a finite number"));
  const auto summary = kibench::json::parse(result.out, "summary");
  CHECK(at(summary, {"imported"}).as_int() == 1);
  CHECK(skipped_count(summary, "malformed") == 2);
  CHECK(directories_in(out).size() == 1);

  const auto strict = import_rows(csv, dir.path() / "strict", "--strict");
  CHECK(strict.exit_code == 2);
  CHECK_THAT(strict.err, Contains("2 of 3 rows skipped for a problem"));
  CHECK_FALSE(fs::exists(dir.path() / "strict"));
}

TEST_CASE("control characters in CSV fields are shown escaped, one line per row", "[import][malformed]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  const std::string gpu = "NVIDIA H100 80GB HBM3";
  const fs::path csv = write_csv(dir, "escapes.csv",
                                 {rows.header, replaced(rows.seed_row, gpu, "\x1b[2J\x1b[31mNVIDIA\x1b[0m"),
                                  replaced(rows.seed_row, gpu, std::string("NUL\0here", 8)),
                                  replaced(rows.seed_row, gpu, "\"two\nlines\rand a return\""),
                                  replaced(rows.seed_row, gpu, "bidi\u202Eevil")});
  const auto result = import_rows(csv, dir.path() / "out");
  INFO(result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.err.find('\x1b') == std::string::npos);
  CHECK(result.err.find('\0') == std::string::npos);
  CHECK(result.err.find('\r') == std::string::npos);
  CHECK(result.err.find("\u202E") == std::string::npos);
  CHECK_THAT(result.err, Contains("unknown GPU \"\\x1b[2J\\x1b[31mNVIDIA\\x1b[0m\""));
  CHECK_THAT(result.err, Contains("unknown GPU \"NUL\\x00here\""));
  CHECK_THAT(result.err, Contains("unknown GPU \"two\\nlines\\rand a return\""));
  CHECK_THAT(result.err, Contains("unknown GPU \"bidi\\u202eevil\""));
  // Every line of stderr is one row's message.
  std::size_t lines = 0;
  for (std::size_t start = 0; start < result.err.size(); ++lines) {
    CHECK(result.err.compare(start, csv.string().size(), csv.string()) == 0);
    start = result.err.find('\n', start) + 1;
    if (start == 0) break;
  }
  CHECK(lines == 4);
}

namespace {

// The peak resident memory, in KiB, of kibench run with `arguments` (its
// output discarded).
long peak_memory_kib(const std::vector<std::string> &arguments) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    std::vector<char *> argv{const_cast<char *>(KIBENCH_BINARY)};
    for (const auto &argument : arguments) argv.push_back(const_cast<char *>(argument.c_str()));
    argv.push_back(nullptr);
    ::execv(KIBENCH_BINARY, argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  REQUIRE(::wait4(child, &status, 0, &usage) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return usage.ru_maxrss;
}

} // namespace

TEST_CASE("import liger streams records to disk: memory does not grow with the rows", "[import][memory]") {
  TempDir dir;
  const RowsCsv rows = rows_csv();
  // Rows of distinct cases (the seed row at other token counts), so every
  // one is imported.
  const auto csv_of = [&](std::size_t n) {
    std::vector<std::string> lines{rows.header};
    for (std::size_t k = 0; k < n; ++k)
      lines.push_back(replaced(rows.seed_row, "B x T,8192,", "B x T," + std::to_string(1000 + k) + ","));
    return write_csv(dir, std::to_string(n) + ".csv", lines);
  };
  const fs::path few = csv_of(100);
  const fs::path many = csv_of(700);
  // Most of the peak is the libraries kibench maps (~210 MiB); the kernel
  // may reclaim some of those pages from a process while it runs on a busy
  // machine, so each side is measured twice and the comparison leans the
  // way noise cannot make a pass: the higher peak of the small import
  // against the lower of the large one.
  const auto import_peak = [&](const fs::path &csv, const std::string &out) {
    const long first = peak_memory_kib({"import", "liger", csv.string(), "--out", (dir.path() / out).string()});
    const long second =
        peak_memory_kib({"import", "liger", csv.string(), "--out", (dir.path() / (out + "-again")).string()});
    return std::pair{first, second};
  };
  const auto [few_a, few_b] = import_peak(few, "few");
  const auto [many_a, many_b] = import_peak(many, "many");
  const long few_kib = std::max(few_a, few_b);
  const long many_kib = std::min(many_a, many_b);
  CHECK(directories_in(dir.path() / "many").size() == 700);
  // Held in memory, the 600 more records took about 39 KiB each (23 MiB);
  // streamed, only their summary lines stay.
  INFO("100 rows: " << few_a << " and " << few_b << " KiB, 700 rows: " << many_a << " and " << many_b << " KiB");
  CHECK(many_kib - few_kib < 8 * 1024);
}
