#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "lib/json/parse.hpp"
#include "test/test_digest_support.hpp"
#include "test/source_tree.hpp"

using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

const std::filesystem::path kSeedRecord =
    kibench::test::test_data_dir() / "seed" / "seed-record.json";

struct Completed {
  int exit_code = -1;
  std::string output; // stdout and stderr together
};

// Runs `kibench ARGS` through the shell and collects what it prints.
Completed kibench_cli(const std::string &arguments) {
  const std::string command = std::string("'") + KIBENCH_BINARY + "' " + arguments + " 2>&1";
  Completed completed;
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0) completed.output.append(buffer, n);
  const int status = pclose(pipe.release());
  completed.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return completed;
}

std::string quoted(const std::filesystem::path &path) {
  return "'" + path.string() + "'";
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

} // namespace

TEST_CASE("kibench digest prints the seed page's digests", "[digest][cli][seed]") {
  const auto result = kibench_cli("digest " + quoted(kSeedRecord));
  INFO(result.output);
  CHECK(result.exit_code == 0);
  const std::string file = kSeedRecord.lexically_normal().string();
  CHECK_THAT(result.output,
             Contains("sha256:5b02ee9a2140fbc6fcc1c89800f6c177ba22718c8897cb532bf0ba91867c1e58  " + file +
                      "#protocol\n"));
  CHECK_THAT(result.output,
             Contains("sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393  " + file +
                      "#environment\n"));
  CHECK_THAT(result.output, Contains("sha256:04bb56fcc59a16aba8848d8"));
  const auto lines = lines_of(result.output);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].starts_with("sha256:04bb56fcc59a16aba8848d8"));
  CHECK(lines[0].ends_with("#run"));
}

TEST_CASE("kibench digest --json prints one canonical object per manifest", "[digest][cli]") {
  const auto result = kibench_cli("digest --json " + quoted(kSeedRecord));
  CHECK(result.exit_code == 0);
  const auto lines = lines_of(result.output);
  REQUIRE(lines.size() == 3);
  const auto protocol = kibench::json::parse(lines[1], "line 2");
  CHECK(protocol.find("kind")->as_string() == "BenchmarkProtocol");
  CHECK(protocol.find("name")->as_string() == "liger-bench-do-bench-full");
  CHECK(protocol.find("digest")->as_string() ==
        "sha256:5b02ee9a2140fbc6fcc1c89800f6c177ba22718c8897cb532bf0ba91867c1e58");
  CHECK(protocol.find("file")->as_string().ends_with("seed-record.json#protocol"));
  CHECK(kibench::json::canonical(protocol) == lines[1]);
}

TEST_CASE("kibench digest --verify on the lone seed record", "[digest][cli][seed]") {
  ScratchDirectory scratch("cli-seed");
  std::filesystem::copy_file(kSeedRecord, scratch / "seed-record.json");
  const auto result = kibench_cli("digest --verify " + quoted(scratch / "seed-record.json"));
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.output, Contains("ok  " + (scratch / "seed-record.json").string() + "#run\n"));
  CHECK_THAT(result.output, Contains("spec.workloadDigest"));
  CHECK_THAT(result.output, Contains("not present"));
  CHECK_THAT(result.output, !Contains("comparison key  "));
}

TEST_CASE("kibench digest --verify on a run directory", "[digest][cli]") {
  ScratchDirectory scratch("cli-run");
  kibench::test::write_seed_row_run_directory(scratch.path());
  const auto good = kibench_cli("digest --verify " + quoted(scratch.path()));
  CHECK(good.exit_code == 0);
  CHECK_THAT(good.output, Contains("ok  " + (scratch / "run.torch.json").string() + "\n"));
  CHECK_THAT(good.output,
             Contains("comparison key  " + std::string(kibench::test::kSeedRowComparisonKey) + "\n"));

  // A lone run file finds the same manifests beside it.
  const auto lone = kibench_cli("digest --verify " + quoted(scratch / "run.torch.json"));
  CHECK(lone.exit_code == 0);
  CHECK_THAT(lone.output, Contains("found beside it  " + (scratch / "protocol.json").string()));
  CHECK_THAT(lone.output, Contains("comparison key  " + std::string(kibench::test::kSeedRowComparisonKey)));

  const std::string protocol = kibench::test::read_text(scratch / "protocol.json");
  write_text(scratch / "protocol.json", protocol.substr(0, protocol.find("cuda_events")) + "cuda_eventZ" +
                                            protocol.substr(protocol.find("cuda_events") + 11));
  const auto bad = kibench_cli("digest --verify " + quoted(scratch.path()));
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Contains("run.torch.json: spec.protocolDigest: sha256:5b02ee9a"));
  CHECK_THAT(bad.output, Contains("does not match " + (scratch / "protocol.json").string() + " (sha256:"));
}

TEST_CASE("kibench digest rejects bad input with exit code 2", "[digest][cli]") {
  ScratchDirectory scratch("cli-bad");
  write_text(scratch / "broken.json", "{\"apiVersion\": ");
  write_text(scratch / "samples.json", "[1, 2, 3]");
  write_text(scratch / "dup.json", R"({"apiVersion": "a", "kind": "K", "spec": {"x": 1, "x": 2}})");

  const auto broken = kibench_cli("digest " + quoted(scratch / "broken.json"));
  CHECK(broken.exit_code == 2);
  CHECK_THAT(broken.output, Contains("broken.json: $: invalid JSON"));

  const auto samples = kibench_cli("digest --verify " + quoted(scratch / "samples.json"));
  CHECK(samples.exit_code == 2);
  CHECK_THAT(samples.output, Contains("samples.json: not a manifest"));

  const auto duplicate = kibench_cli("digest " + quoted(scratch / "dup.json"));
  CHECK(duplicate.exit_code == 2);
  CHECK_THAT(duplicate.output, Contains("dup.json: $.spec: duplicate key \"x\""));

  CHECK(kibench_cli("digest " + quoted(scratch / "absent.json")).exit_code == 2);
  CHECK(kibench_cli("digest").exit_code == 2);
}

TEST_CASE("kibench digest --help shows examples", "[digest][cli]") {
  const auto help = kibench_cli("digest --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.output, Contains("--verify"));
  CHECK_THAT(help.output, Contains("Examples:"));
  CHECK_THAT(help.output, Contains("kibench digest --verify"));
}
