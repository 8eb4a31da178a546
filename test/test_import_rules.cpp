// The small rules of KernelIndex's Liger import, each against the value its
// README or the seed record states.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "lib/importers/liger/benchmark_run.hpp"
#include "lib/importers/liger/csv_timestamp.hpp"
#include "lib/importers/liger/kernel_binding.hpp"
#include "lib/importers/liger/naming.hpp"
#include "lib/importers/liger/skip_reason.hpp"
#include "lib/json/parse.hpp"

namespace liger = kibench::importers::liger;

TEST_CASE("latencies: round(ms x 1e6) to integer ns, ties upward", "[import][rules]") {
  CHECK(liger::milliseconds_to_ns(213.1598663330078) == 213159866); // the seed's median
  CHECK(liger::milliseconds_to_ns(5e-07) == 1);                     // 0.5 ns
  CHECK(liger::milliseconds_to_ns(1.5e-06) == 2);                   // 1.5 ns
  // 2^52 + 1 ns: adding 0.5 first would round to the even 2^52 + 2.
  CHECK(liger::milliseconds_to_ns(4503599627.370497) == 4503599627370497);
}

TEST_CASE("observedAt: the CSV timestamp read as UTC", "[import][rules]") {
  const auto seed = liger::CsvTimestamp::parse("2024-12-03 08:00:25");
  REQUIRE(seed);
  CHECK(seed->observed_at() == "2024-12-03T08:00:25.000Z");
  CHECK(liger::CsvTimestamp::parse("2024-02-29 23:59:59"));
  CHECK_FALSE(liger::CsvTimestamp::parse("2023-02-29 00:00:00"));
  CHECK_FALSE(liger::CsvTimestamp::parse("2024-12-03T08:00:25"));
  CHECK_FALSE(liger::CsvTimestamp::parse("2024-12-03 24:00:00"));
  CHECK_FALSE(liger::CsvTimestamp::parse("2024-13-03 08:00:25"));
  CHECK_FALSE(liger::CsvTimestamp::parse("2024-12-03 08:00:25 "));
}

TEST_CASE("case key: axes in '_' < digits < letters order, then the dtype", "[import][rules]") {
  CHECK(liger::case_key({{"vocab", 128256}, {"tokens", 8192}, {"hidden", 4096}}, "bf16") ==
        "hidden4096-tokens8192-vocab128256-bf16");
  CHECK(liger::case_key({{"ab", 3}, {"a1", 2}, {"a_b", 1}}, "fp32") == "a_b1-a12-ab3-fp32");
  CHECK(liger::case_key_less("student_hidden", "students"));
  CHECK_FALSE(liger::case_key_less("students", "student_hidden"));
}

TEST_CASE("run names are cut at 100 characters after trimming, so one may end in '-'", "[import][rules]") {
  const liger::RunIdentity seed{"distill_jsd_loss",
                                "full",
                                "torch",
                                "NVIDIA H100 80GB HBM3",
                                "hidden4096-tokens8192-vocab128256-bf16",
                                "2024-12-03 08:00:25"};
  CHECK(
      liger::run_name(seed) ==
      "liger-distill-jsd-loss-full-torch-nvidia-h100-80gb-hbm3-hidden4096-tokens8192-vocab128256-bf16-2024-");
  CHECK(liger::external_id(seed) == "distill_jsd_loss/full/torch/nvidia-h100-80gb-hbm3/"
                                    "hidden4096-tokens8192-vocab128256-bf16/2024-12-03-08-00-25");
  CHECK(liger::import_kebab("  NVIDIA GeForce RTX 4090!! ") == "nvidia-geforce-rtx-4090");
}

namespace {

liger::BoundCase bind(std::string_view kernel, std::string_view x_name, double x, std::string_view config) {
  return liger::bind_kernel_row(kernel, x_name, x, kibench::json::parse(config, "config").as_object());
}

// The message of the did_not_bind skip that binding `config` raises.
std::string unbound_message(std::string_view kernel, std::string_view x_name, double x,
                            std::string_view config) {
  try {
    bind(kernel, x_name, x, config);
  } catch (const liger::RowSkipped &skip) {
    CHECK(skip.reason() == liger::SkipReason::did_not_bind);
    return skip.what();
  }
  FAIL("the row bound");
  return {};
}

using Axes = std::vector<std::pair<std::string, std::int64_t>>;
using Scalars = std::vector<std::pair<std::string, double>>;

} // namespace

TEST_CASE("per-kernel binding of x_value and the config", "[import][rules]") {
  SECTION("distill_jsd_loss") {
    const auto bound =
        bind("distill_jsd_loss", "BT", 8192,
             R"({"H": 4096, "V": 128256, "mode": "forward", "dtype": "torch.bfloat16", "bias": false,
                                "weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100})");
    CHECK(bound.axes == Axes{{"tokens", 8192}, {"hidden", 4096}, {"vocab", 128256}});
    CHECK(bound.float_dtype == "bf16");
    CHECK(bound.scalars == Scalars{{"weight_hard_loss", 0.5}, {"weight_soft_loss", 0.5}});
  }
  SECTION("fused_linear_jsd: beta fixed at 0.5") {
    const auto bound =
        bind("fused_linear_jsd", "BT", 1024, R"({"H": 4096, "V": 128256, "dtype": "torch.float16"})");
    CHECK(bound.axes == Axes{{"tokens", 1024}, {"hidden", 4096}, {"vocab", 128256}});
    CHECK(bound.float_dtype == "fp16");
    CHECK(bound.scalars == Scalars{{"beta", 0.5}});
  }
  SECTION("jsd sweeping the vocabulary: tokens = B x T") {
    const auto bound = bind("jsd", "V", 4096, R"({"B": 4, "T": 2048})");
    CHECK(bound.axes == Axes{{"tokens", 8192}, {"vocab", 4096}});
    CHECK(bound.float_dtype == "fp32");
    CHECK(bound.scalars.empty());
  }
  SECTION("jsd sweeping tokens: vocab from vocab_size") {
    const auto bound = bind("jsd", "BT", 1024, R"({"vocab_size": 128256, "bsz": 1, "seq_len": 8192})");
    CHECK(bound.axes == Axes{{"tokens", 1024}, {"vocab", 128256}});
  }
}

TEST_CASE("rows that do not bind say why", "[import][rules]") {
  const std::string distill_base =
      R"("H": 4096, "V": 128256, "dtype": "torch.bfloat16", "weight_hard_loss": 0.5,
                                      "weight_soft_loss": 0.5)";
  CHECK_THAT(unbound_message("distill_jsd_loss", "BT", 8192, "{" + distill_base + R"(, "bias": true})"),
             Catch::Matchers::Contains("\"bias\" is true"));
  CHECK_THAT(unbound_message("distill_jsd_loss", "BT", 8192, "{" + distill_base + "}"),
             Catch::Matchers::Contains("\"bias\" is missing"));
  CHECK_THAT(unbound_message("distill_jsd_loss", "V", 8192, "{" + distill_base + R"(, "bias": false})"),
             Catch::Matchers::Contains("x_name \"BT\", not \"V\""));
  CHECK_THAT(unbound_message("distill_jsd_loss", "BT", 8192,
                             R"({"H": 4095, "V": 128256, "dtype": "torch.bfloat16", "bias": false,
                                 "weight_hard_loss": 0.5, "weight_soft_loss": 0.5})"),
             Catch::Matchers::Contains("odd"));
  // Booleans are never numbers (rule 2).
  CHECK_THAT(unbound_message("fused_linear_jsd", "BT", 1024,
                             R"({"H": true, "V": 128256, "dtype": "torch.bfloat16"})"),
             Catch::Matchers::Contains("config \"H\" is true, not a number"));
  CHECK_THAT(
      unbound_message("fused_linear_jsd", "BT", 1024, R"({"H": 4096, "V": 128256, "dtype": "torch.int8"})"),
      Catch::Matchers::Contains("\"dtype\" is \"torch.int8\""));
  CHECK_THAT(unbound_message("jsd", "BT", 1024.5, R"({"vocab_size": 128256})"),
             Catch::Matchers::Contains("x_value = 1024.5 is not a positive integer"));
  CHECK_THAT(unbound_message("jsd", "B", 4, R"({"vocab_size": 128256})"),
             Catch::Matchers::Contains("\"V\" or \"BT\""));
}
