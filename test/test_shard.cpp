// Sharded runs (lib/run/shard.hpp) and `kibench merge` (lib/merge/merge.hpp):
// the shard from --shard or a scheduler's environment, and a run split
// three ways, by each of them, merging into the unsharded run's points.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/run/parallel_gpus.hpp"
#include "lib/run/shard.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using kibench::InputError;
using kibench::Shard;
using namespace kibench::test;

namespace {

kibench::EnvironmentReader environment(std::map<std::string, std::string> values) {
  return [values](const char *name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(const std::function<void()> &action) {
  try {
    action();
  } catch (const InputError &e) {
    return e.what();
  }
  return "";
}

// Every run directory's (workload digest, OperationSpec digest) under `folder`.
std::multiset<std::pair<std::string, std::string>> points_in(const fs::path &folder) {
  std::multiset<std::pair<std::string, std::string>> points;
  for (const auto &entry : fs::directory_iterator(folder)) {
    if (!entry.is_directory()) continue;
    const auto workload = kibench::json::parse_file(entry.path() / "workload.json");
    const auto operation = kibench::json::parse_file(entry.path() / "operation.json");
    CHECK(kibench::json::string_at(workload, "spec.operationSpecDigest") == kibench::manifest_digest(operation));
    points.insert({kibench::manifest_digest(workload), kibench::manifest_digest(operation)});
  }
  return points;
}

} // namespace

TEST_CASE("the shard K/N of --shard: K from 0 to N - 1", "[shard]") {
  const Shard shard = kibench::parse_shard("2/3");
  CHECK(shard.index == 2);
  CHECK(shard.count == 3);
  CHECK(shard.source == "--shard");
  CHECK(shard.text() == "2/3");
  CHECK(shard.takes(2));
  CHECK(shard.takes(5));
  CHECK_FALSE(shard.takes(3));
  for (const char *bad : {"3/3", "1/0", "0/0", "-1/3", "1", "a/3", "1/3/4", "", "/3", "1/", "99999999999/3"}) {
    INFO(bad);
    CHECK_THAT(error_of([&] { kibench::parse_shard(bad); }), Contains("--shard"));
  }
}

TEST_CASE("the shard from a job scheduler's environment", "[shard]") {
  using kibench::shard_from_environment;
  CHECK_FALSE(shard_from_environment(environment({}), std::nullopt));

  // A Slurm array: its index counts from the array's first task.
  auto slurm = shard_from_environment(
      environment({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}), std::nullopt);
  REQUIRE(slurm);
  CHECK(slurm->text() == "2/3");
  CHECK_THAT(slurm->source, Contains("SLURM_ARRAY_TASK_ID"));
  slurm = shard_from_environment(
      environment({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}}),
      std::nullopt);
  REQUIRE(slurm);
  CHECK(slurm->text() == "2/3");

  // A Kubernetes Indexed Job: the count is --shards.
  const auto job = shard_from_environment(environment({{"JOB_COMPLETION_INDEX", "1"}}), 4);
  REQUIRE(job);
  CHECK(job->text() == "1/4");
  CHECK_THAT(error_of([] { shard_from_environment(environment({{"JOB_COMPLETION_INDEX", "1"}}), std::nullopt); }),
             Contains("--shards"));
  CHECK_THAT(error_of([] { shard_from_environment(environment({}), 3); }), Contains("JOB_COMPLETION_INDEX"));

  const auto bazel =
      shard_from_environment(environment({{"TEST_SHARD_INDEX", "0"}, {"TEST_TOTAL_SHARDS", "2"}}), std::nullopt);
  REQUIRE(bazel);
  CHECK(bazel->text() == "0/2");

  // Two that agree are one shard; two that disagree are named both.
  CHECK(shard_from_environment(environment({{"SLURM_ARRAY_TASK_ID", "1"},
                                            {"SLURM_ARRAY_TASK_COUNT", "3"},
                                            {"TEST_SHARD_INDEX", "1"},
                                            {"TEST_TOTAL_SHARDS", "3"}}),
                               std::nullopt)
            ->text() == "1/3");
  const std::string conflict = error_of([] {
    shard_from_environment(environment({{"SLURM_ARRAY_TASK_ID", "2"},
                                        {"SLURM_ARRAY_TASK_COUNT", "3"},
                                        {"TEST_SHARD_INDEX", "1"},
                                        {"TEST_TOTAL_SHARDS", "3"}}),
                           std::nullopt);
  });
  CHECK_THAT(conflict, Contains("SLURM_ARRAY_TASK_ID") && Contains("TEST_SHARD_INDEX"));

  // Half a pair, a value out of range, text that is not a number.
  CHECK_THAT(error_of([] { shard_from_environment(environment({{"SLURM_ARRAY_TASK_ID", "1"}}), std::nullopt); }),
             Contains("without SLURM_ARRAY_TASK_COUNT"));
  CHECK_THAT(error_of([] {
               shard_from_environment(environment({{"TEST_SHARD_INDEX", "3"}, {"TEST_TOTAL_SHARDS", "3"}}),
                                      std::nullopt);
             }),
             Contains("not below the count 3"));
  CHECK_THAT(error_of([] {
               shard_from_environment(environment({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}),
                                      std::nullopt);
             }),
             Contains("not a whole number"));
  CHECK_THAT(error_of([] {
               shard_from_environment(
                   environment({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}}),
                   std::nullopt);
             }),
             Contains("below SLURM_ARRAY_TASK_MIN"));
}

TEST_CASE("a run split three ways, by --shard and by each scheduler's variables, merges into the whole run",
          "[cli][shard]") {
  TempDir tmp;
  std::string workloads;
  int count = 0;
  for (const auto &entry : fs::directory_iterator(source_dir() / "workloads/small")) {
    workloads += quoted(entry.path()) + " ";
    ++count;
  }
  REQUIRE(count == 9);
  const std::string run = std::string("'") + KIBENCH_BINARY + "' run " + workloads +
                          "--axis tokens=16,32 --impl cpu-reference --min-samples 3 --max-samples 3 --min-time 0 "
                          "--warmup 0";

  const auto whole = run_command(run + " --out " + quoted(tmp.path() / "whole"));
  INFO(whole.out << whole.err);
  REQUIRE(whole.exit_code == 0);
  const auto expected = points_in(tmp.path() / "whole");
  REQUIRE(expected.size() == 18);

  struct Way {
    std::string name;
    std::vector<std::string> prefixes; // the environment (or flag) of each of the three shards
    std::string flags;
  };
  const std::vector<Way> ways{
      {"flag", {"", "", ""}, ""},
      {"slurm",
       {"SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_ID=1",
        "SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_ID=2",
        "SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_ID=3"},
       ""},
      {"kubernetes", {"JOB_COMPLETION_INDEX=0", "JOB_COMPLETION_INDEX=1", "JOB_COMPLETION_INDEX=2"}, " --shards 3"},
      {"bazel",
       {"TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX=0", "TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX=1",
        "TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX=2"},
       ""},
  };
  for (const Way &way : ways) {
    INFO(way.name);
    std::string shards;
    for (int k = 0; k < 3; ++k) {
      const fs::path out = tmp.path() / way.name / std::to_string(k);
      const std::string flag = way.name == "flag" ? " --shard " + std::to_string(k) + "/3" : way.flags;
      const auto shard = run_command(way.prefixes[k] + " " + run + flag + " --out " + quoted(out));
      INFO(shard.out << shard.err);
      REQUIRE(shard.exit_code == 0);
      CHECK_THAT(shard.err, Contains("6 of the run's 18 points"));
      shards += quoted(out) + " ";
    }
    const fs::path merged = tmp.path() / way.name / "merged";
    const auto merge = run_kibench("merge " + shards + "--out " + quoted(merged));
    INFO(merge.out << merge.err);
    REQUIRE(merge.exit_code == 0);
    CHECK(points_in(merged) == expected);
    CHECK(run_kibench("digest --verify " + quoted(merged)).exit_code == 0);
    const auto compared = run_kibench("compare " + quoted(merged));
    CHECK(compared.exit_code == 0);
    CHECK_THAT(compared.out, Contains("18 runs in 18 cohorts"));
  }

  // Missing and doubled points are listed, exit 1, nothing written.
  const fs::path flag = tmp.path() / "flag";
  const auto missing = run_kibench("merge " + quoted(flag / "0") + " " + quoted(flag / "2") + " --out " +
                                   quoted(tmp.path() / "missing"));
  CHECK(missing.exit_code == 1);
  CHECK(std::count(missing.out.begin(), missing.out.end(), '\n') >= 6);
  CHECK_THAT(missing.out, Contains("missing  point 1 of 18"));
  CHECK_FALSE(fs::exists(tmp.path() / "missing"));
  const auto doubled = run_kibench("merge " + quoted(flag / "0") + " " + quoted(flag / "1") + " " +
                                   quoted(flag / "2") + " " + quoted(tmp.path() / "slurm" / "0") + " --out " +
                                   quoted(tmp.path() / "doubled"));
  CHECK(doubled.exit_code == 1);
  CHECK_THAT(doubled.out, Contains("doubled  point 0 of 18"));
  CHECK_FALSE(fs::exists(tmp.path() / "doubled"));
  // A run merged with itself: every point doubled.
  const auto itself = run_kibench("merge " + quoted(tmp.path() / "flag" / "merged") + " " +
                                  quoted(tmp.path() / "flag" / "merged") + " --out " + quoted(tmp.path() / "itself"));
  CHECK(itself.exit_code == 1);
  CHECK_THAT(itself.out, Contains("doubled  point 17 of 18"));

  // A shard of a run with other settings: exit 2, the difference named.
  const auto other = run_command(run + " --pass forward --shard 0/3 --out " + quoted(tmp.path() / "other"));
  REQUIRE(other.exit_code == 0);
  const auto mixed = run_kibench("merge " + quoted(tmp.path() / "other") + " " + quoted(flag / "1") + " " +
                                 quoted(flag / "2") + " --out " + quoted(tmp.path() / "mixed"));
  CHECK(mixed.exit_code == 2);
  CHECK_THAT(mixed.err, Contains("shards of different runs: settings.") && Contains("forward"));
  CHECK_FALSE(fs::exists(tmp.path() / "mixed"));
  // An unsharded run does not merge.
  const auto plain = run_kibench("merge " + quoted(tmp.path() / "whole") + " --out " + quoted(tmp.path() / "plain"));
  CHECK(plain.exit_code == 2);
  CHECK_THAT(plain.err, Contains("not made as a shard"));

  // A shard with no points: a note, exit 0, nothing written.
  const auto empty = run_command(run + " --shard 40/41 --out " + quoted(tmp.path() / "empty"));
  CHECK(empty.exit_code == 0);
  CHECK_THAT(empty.err, Contains("has no points: nothing to run, nothing written"));
  CHECK_FALSE(fs::exists(tmp.path() / "empty"));
  // Out of range, and a conflict in the environment: exit 2.
  CHECK(run_command(run + " --shard 3/3 --out " + quoted(tmp.path() / "bad")).exit_code == 2);
  const auto conflict = run_command("TEST_TOTAL_SHARDS=3 TEST_SHARD_INDEX=0 JOB_COMPLETION_INDEX=1 " + run +
                                    " --shards 3 --out " + quoted(tmp.path() / "bad"));
  CHECK(conflict.exit_code == 2);
  CHECK_THAT(conflict.err, Contains("JOB_COMPLETION_INDEX") && Contains("TEST_SHARD_INDEX"));
  CHECK_FALSE(fs::exists(tmp.path() / "bad"));
}

TEST_CASE("run with parallel GPUs: GPU g of G within the host's shard K/N takes shard K + N*g of N*G", "[shard]") {
  TempDir tmp;
  // Three hosts of two GPUs each cover every point once.
  std::set<std::size_t> covered;
  for (std::size_t host = 0; host < 3; ++host) {
    const auto workers =
        kibench::plan_gpu_workers(2, Shard{host, 3, "test"}, std::string("GPU-a,GPU-b"), tmp.path());
    REQUIRE(workers.size() == 2);
    CHECK(workers[0].device == "GPU-a");
    CHECK(workers[1].device == "GPU-b");
    for (const auto &w : workers) {
      CHECK(w.shard.count == 6);
      CHECK(w.shard.index % 3 == host);
      CHECK_THAT(w.shard.source, Contains("within " + std::to_string(host) + "/3"));
      for (std::size_t point = 0; point < 60; ++point)
        if (w.shard.takes(point)) CHECK(covered.insert(point).second);
    }
  }
  CHECK(covered.size() == 60);
  // One GPU, no scheduler: the whole run, on device 0.
  const auto one = kibench::plan_gpu_workers(1, std::nullopt, std::nullopt, tmp.path());
  REQUIRE(one.size() == 1);
  CHECK(one[0].shard.text() == "0/1");
  CHECK(one[0].device == "0");

  // The workers start at once, each with its device and shard, its output in
  // its log; the run's exit code is the worst of theirs.
  auto workers = kibench::plan_gpu_workers(3, std::nullopt, std::nullopt, tmp.path());
  const std::vector<std::string> command{"/bin/sh", "-c",
                                         "echo \"device=$CUDA_VISIBLE_DEVICES $1 $2\"; exit $((${2%%/*} == 1))", "sh"};
  CHECK(kibench::run_gpu_workers(command, workers) == 1);
  for (const auto &w : workers) {
    INFO(w.log);
    CHECK(w.exit_code == (w.gpu == 1 ? 1 : 0));
    CHECK(read_text(w.log) == fmt::format("device={} --shard {}/3\n", w.gpu, w.gpu));
  }
}

TEST_CASE("run --parallel-gpus without a GPU is refused, nothing written", "[cli][shard]") {
  TempDir tmp;
  const auto run = run_kibench("run " + quoted(source_dir() / "workloads/small/small-v1000-h64-t32.json") +
                               " --parallel-gpus --out " + quoted(tmp.path() / "runs"));
  if (run.exit_code == 2 && run.err.find("no GPU here") != std::string::npos) {
    CHECK_FALSE(fs::exists(tmp.path() / "runs"));
  } else {
    WARN("a GPU is here: --parallel-gpus ran (" << run.exit_code << "); its refusal without one is not checked");
  }
}
