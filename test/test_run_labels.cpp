// An implementation's run labels (Implementation::run_labels) as they join
// a BenchmarkRun's metadata.labels: kept in order after the harness's own,
// and refused, naming the key, where the KernelIndex schema would refuse
// them or where they would overwrite what the harness wrote.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "kernels/cuda/tuning_labels.hpp"
#include "lib/json/value.hpp"
#include "lib/run/implementation_files.hpp"

using namespace kibench;

namespace {

json::Object harness_labels() {
  return json::Object{{"implementation", "fused"}, {"pass", "full"}, {"stop_reason", "noise"}};
}

} // namespace

TEST_CASE("run labels follow the harness's labels in their order", "[run][labels]") {
  json::Object labels = harness_labels();
  add_run_labels(labels, json::Object{{"chunk_rows", "2816"}, {"chunks", "3"}, {"gemm_1", "x"}}, "fused");
  REQUIRE(labels.size() == 6);
  std::string keys;
  for (const auto &[key, value] : labels) keys += key + ",";
  CHECK(keys == "implementation,pass,stop_reason,chunk_rows,chunks,gemm_1,");
  CHECK(labels.find("chunks")->as_string() == "3");
  add_run_labels(labels, json::Object{}, "fused");
  CHECK(labels.size() == 6);
}

TEST_CASE("run labels the schema would refuse are refused, naming the key", "[run][labels]") {
  const auto refusal = [](const json::Object &bad) {
    json::Object labels = harness_labels();
    try {
      add_run_labels(labels, bad, "fused");
    } catch (const std::logic_error &e) {
      CHECK(labels.size() == 3); // nothing of a refused label was added
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal(json::Object{{"Chunks", "3"}}).find("'Chunks'") != std::string::npos);
  CHECK(refusal(json::Object{{"2chunks", "3"}}).find("'2chunks'") != std::string::npos);
  CHECK(refusal(json::Object{{"chunk-rows", "3"}}).find("'chunk-rows'") != std::string::npos);
  CHECK(refusal(json::Object{{"", "3"}}) != "accepted");
  CHECK(refusal(json::Object{{"chunks", 3.0}}).find("'chunks' is not a string") != std::string::npos);
  CHECK(refusal(json::Object{{"long", std::string(201, 'x')}}).find("200 characters") != std::string::npos);
  CHECK(refusal(json::Object{{"pass", "forward"}}).find("harness's own") != std::string::npos);
  CHECK(refusal(json::Object{{"long", std::string(200, 'x')}}) == "accepted");
}

TEST_CASE("the GEMM tuning labels fit the schema for the longest shapes kibench tunes", "[run][labels]") {
  // The longest shape line: int64-sized dimensions, every flag, a device
  // alpha and an SM target; the longest configuration line.
  gpu::TuningRecord r;
  r.shape = "9223372036854775807x9223372036854775807x9223372036854775807 bf16->fp32 ta=1 tb=1 beta=1 bias=1 "
            "sms=132 alpha=device";
  r.timed = 16;
  r.chosen = 15;
  r.heuristic_ms = 123456.789;
  r.chosen_ms = 123456.789;
  r.algorithm = "algo 2147483647, tile enum 4294967295, stages enum 4294967295, cluster enum 65535, split-k "
                "2147483647, swizzle 4294967295, custom 4294967295";
  // The second shape was timed again at the power limit, with the widest
  // tuning settings' text.
  gpu::TuningRecord at_cap = r;
  at_cap.at_cap = 16;
  at_cap.at_cap_ms = 123456.789;
  at_cap.cold_best_ms = 123456.789;
  gpu::AlgorithmTuning widest = gpu::kMeasuredTuning;
  widest.at_cap_margin = 0.123456;
  widest.at_cap_min_ms = 123456.789;
  widest.at_cap_burst_s = 0.123456;
  widest.at_cap_rounds = 2147483647;
  gpu::AlgorithmTuning cold_only = gpu::kMeasuredTuning;
  cold_only.at_cap_margin = 0.0;
  for (const gpu::AlgorithmTuning &tuning_used : {cold_only, widest}) {
    const json::Object tuning = gpu::gemm_tuning_labels({r, at_cap}, tuning_used);
    const bool timed_at_cap = tuning_used.at_cap_margin > 0.0;
    // gemm_tuning, two gemm_i and gemm_i_algorithm, gemm_2_at_cap, and
    // gemm_tuning_at_cap where the settings time at the cap.
    CHECK(tuning.size() == (timed_at_cap ? 7u : 6u));
    CHECK(tuning.find("gemm_2_algorithm")->as_string() == r.algorithm);
    CHECK(tuning.contains("gemm_2_at_cap"));
    CHECK_FALSE(tuning.contains("gemm_1_at_cap"));
    CHECK(tuning.contains("gemm_tuning_at_cap") == timed_at_cap);
    json::Object labels = harness_labels();
    CHECK_NOTHROW(add_run_labels(labels, tuning, "cublas-floor"));
  }
}
