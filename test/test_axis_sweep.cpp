// Sweeps from the command line (--axis): the value syntax and its
// refusals, and derived WorkloadCases that are exactly what
// workloads/sweeps/generate.py writes for the same shape.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/workload/axis_sweep.hpp"
#include "lib/workload/workload.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench;
using Catch::Matchers::Contains;
using Values = std::vector<std::int64_t>;

namespace {

const fs::path kWorkloads = kibench::test::source_dir() / "workloads";

} // namespace

TEST_CASE("axis values: lists, ranges, powers of two, brackets as NVBench writes them", "[sweep][axis]") {
  CHECK(parse_axis("tokens=1024,2048,4096").values == Values{1024, 2048, 4096});
  CHECK(parse_axis("tokens=1024").name == "tokens");
  CHECK(parse_axis("vocab=32000:128000:32000").values == Values{32000, 64000, 96000, 128000});
  CHECK(parse_axis("vocab=10:14").values == Values{10, 11, 12, 13, 14});
  CHECK(parse_axis("tokens=1024:8192:pow2").values == Values{1024, 2048, 4096, 8192});
  CHECK(parse_axis("tokens=[1024:8192:pow2]").values == Values{1024, 2048, 4096, 8192});
  CHECK(parse_axis("tokens=1000:9000:pow2").values == Values{1000, 2000, 4000, 8000}); // up to STOP
  // Items mix, and a value given twice is kept once where it first came.
  CHECK(parse_axis("tokens=7,1024:4096:pow2,2048,1").values == Values{7, 1024, 2048, 4096, 1});
  CHECK(parse_axis("hidden=2").values == Values{2});
}

TEST_CASE("axis values that cannot be read are refused, naming the flag", "[sweep][axis]") {
  const auto refuses = [](const std::string &text, const std::string &why) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_axis(text), InputError);
    CHECK_THROWS_WITH(parse_axis(text), Contains("--axis") && Contains(why));
  };
  refuses("tokens", "is not NAME=VALUES");
  refuses("batch=4", "unknown axis \"batch\" (the axes: tokens, vocab, hidden)");
  refuses("student_hidden=32", "student_hidden follows hidden");
  refuses("tokens=", "no values");
  refuses("tokens=[]", "no values");
  refuses("tokens=0", "\"0\" is not a whole number in [1, 2147483647]");
  refuses("tokens=-5", "is not a whole number");
  refuses("tokens=1e3", "is not a whole number");
  refuses("tokens=2147483648", "is not a whole number");
  refuses("tokens=1024,,2048", "\"\" is not a whole number");
  refuses("tokens=8192:1024:pow2", "runs backwards");
  refuses("tokens=1:100:0", "\"0\" is not a whole number");
  refuses("tokens=1:5000:1", "more than 1024 values");
  refuses("tokens=1:2:3:4", "is not START:STOP:STEP");
  refuses("tokens=1:8:x2", "\"x2\" is not a whole number");
  refuses("hidden=1,64", "hidden=1 leaves the student no hidden units");
}

TEST_CASE("axes together: each once, and a bounded product", "[sweep][axis]") {
  const auto axes = parse_axes({"tokens=16,32", "vocab=1000,1003,2000"});
  REQUIRE(axes.size() == 2);
  CHECK(axes[1].values == Values{1000, 1003, 2000});
  CHECK_THROWS_WITH(parse_axes({"tokens=16", "tokens=32"}), Contains("--axis: tokens given twice"));
  CHECK_THROWS_WITH(parse_axes({"tokens=1:1000", "vocab=1:1000"}), Contains("more than 4096 workloads"));
  CHECK(parse_axes({}).empty());
}

// generate.py's files are the reference: the seed at each of their shapes
// must derive to the same WorkloadCase, metadata name and title included.
TEST_CASE("a derived case is the WorkloadCase generate.py writes for that shape", "[sweep][axis]") {
  const Workload seed = load_workload(kWorkloads / "seed-distill-jsd-h4096-t8192-v128256.json");
  std::size_t compared = 0;
  for (const fs::path &folder : {kWorkloads / "sweeps", kWorkloads / "sweeps" / "ragged"}) {
    for (const auto &entry : fs::directory_iterator(folder)) {
      if (entry.path().extension() != ".json") continue;
      CAPTURE(entry.path());
      const json::Value generated = json::parse_file(entry.path());
      const std::map<std::string, std::int64_t> axes{
          {"tokens", json::member_at(generated, "spec.axes.tokens")->as_int()},
          {"vocab", json::member_at(generated, "spec.axes.vocab")->as_int()},
          {"hidden", json::member_at(generated, "spec.axes.hidden")->as_int()}};
      const json::Value derived = derive_workload_case(seed.manifest, axes);
      CHECK(json::canonical(*derived.find("spec")) == json::canonical(*generated.find("spec")));
      CHECK(manifest_digest(derived) == manifest_digest(generated));
      CHECK(json::string_at(derived, "metadata.name") == json::string_at(generated, "metadata.name"));
      CHECK(json::string_at(derived, "metadata.title") == json::string_at(generated, "metadata.title"));
      ++compared;
    }
  }
  CHECK(compared == 25);
}

TEST_CASE("expand_sweep: every combination, the last axis fastest, each a valid workload", "[sweep][axis]") {
  const Workload base = load_workload(kWorkloads / "small" / "small-v1000-h64-t32-bias.json");
  const auto workloads = expand_sweep(base, parse_axes({"tokens=16,32", "hidden=64,128", "vocab=1003"}));
  REQUIRE(workloads.size() == 4);
  const std::vector<std::string> names = {workloads[0].name, workloads[1].name, workloads[2].name,
                                          workloads[3].name};
  CHECK(names == std::vector<std::string>{"distill-jsd-loss-hidden64-tokens16-vocab1003-bf16",
                                          "distill-jsd-loss-hidden128-tokens16-vocab1003-bf16",
                                          "distill-jsd-loss-hidden64-tokens32-vocab1003-bf16",
                                          "distill-jsd-loss-hidden128-tokens32-vocab1003-bf16"});
  const Workload &w = workloads[1];
  CHECK(w.tokens == 16);
  CHECK(w.vocab == 1003);
  CHECK(w.hidden == 128);
  CHECK(w.student_hidden == 64);
  // nn.Linear's bounds at the new fan-in, for the weights and the biases.
  CHECK(w.student_weight.high == 0.125);
  CHECK(w.teacher_weight.low == -1.0 / std::sqrt(128.0));
  REQUIRE(w.student_bias);
  CHECK(w.student_bias->high == 0.125);
  CHECK(w.teacher_bias->high == 1.0 / std::sqrt(128.0));
  CHECK(w.target.high == 1003);
  // Seeds and scalars stay the base's; the description names it.
  CHECK(w.student_input.seed == base.student_input.seed);
  CHECK(w.scalars.weight_hard == base.scalars.weight_hard);
  CHECK_THAT(json::string_at(w.manifest, "metadata.description"), Contains(base.name));
  CHECK_THAT(w.source.string(), Contains("at tokens=16, hidden=128, vocab=1003"));

  // Without axes, the base as it is.
  const auto same = expand_sweep(base, {});
  REQUIRE(same.size() == 1);
  CHECK(manifest_digest(same.front().manifest) == manifest_digest(base.manifest));
}
