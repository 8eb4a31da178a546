// Workload files: the shipped ones load with the values they state, the
// seed's operation is KernelIndex's, and the validation rules that a
// malformed file cannot show on its own (acceptance at the boundaries,
// operation lookup, file listing) hold.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "lib/digest/digest.hpp"
#include "lib/error.hpp"
#include "lib/io/data_dir.hpp"
#include "lib/json/parse.hpp"
#include "lib/workload/workload.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using kibench::InputError;
using kibench::Workload;
namespace json = kibench::json;

namespace {

const fs::path workloads_root = kibench::test::source_dir() / "workloads";
// KernelIndex's tables of the Liger import, as kibench ships them.
const fs::path liger_dir = workloads_root / "kernelindex" / "liger";

fs::path small_default() {
  return workloads_root / "small" / "small-v1000-h64-t32.json";
}
fs::path seed_file() {
  return workloads_root / "seed-distill-jsd-h4096-t8192-v128256.json";
}

json::Value operation() {
  return json::parse_file(workloads_root / "operations" / "distill_jsd_loss.json");
}

// The member at a path of keys, for editing a manifest in place.
json::Value &at(json::Value &value, std::initializer_list<std::string_view> keys) {
  json::Value *current = &value;
  for (const auto key : keys) {
    json::Value *next = current->as_object().find(key);
    REQUIRE(next != nullptr);
    current = next;
  }
  return *current;
}

// The InputError message of workload_from_json, or "" if it accepted.
std::string rejection(const json::Value &manifest, const json::Value &op = operation()) {
  try {
    (void)kibench::workload_from_json(manifest, op, "edited.json");
  } catch (const InputError &e) {
    return e.what();
  }
  return {};
}

std::string read_bytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::optional<std::string> old_;
};

class ScopedCwd {
public:
  explicit ScopedCwd(const fs::path &dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~ScopedCwd() { fs::current_path(old_); }
  ScopedCwd(const ScopedCwd &) = delete;
  ScopedCwd &operator=(const ScopedCwd &) = delete;

private:
  fs::path old_;
};

class TempTree {
public:
  TempTree()
      : path_(fs::temp_directory_path() /
              ("kibench-workload-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempTree() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempTree(const TempTree &) = delete;
  TempTree &operator=(const TempTree &) = delete;
  [[nodiscard]] const fs::path &path() const { return path_; }
  void write(const fs::path &relative, const std::string &text) const {
    fs::create_directories((path_ / relative).parent_path());
    std::ofstream(path_ / relative, std::ios::binary) << text;
  }

private:
  static inline int counter_ = 0;
  fs::path path_;
};

void check_generator(const kibench::GeneratorSpec &spec, const json::Value &tensor) {
  const json::Value &data = *tensor.find("data");
  CHECK(spec.name == data.find("generator")->as_string());
  CHECK(spec.seed == static_cast<std::uint64_t>(data.find("seed")->as_int()));
  CHECK(spec.low == data.find("parameters")->find("low")->as_number());
  CHECK(spec.high == data.find("parameters")->find("high")->as_number());
  if (const json::Value *fraction = data.find("parameters")->find("ignore_fraction")) {
    CHECK(spec.ignore_fraction == fraction->as_number());
  }
}

} // namespace

TEST_CASE("every shipped workload loads, typed as its file states", "[workload]") {
  // distill_jsd_loss's; test_jsd_family.cpp checks jsd's and fused_linear_jsd's.
  std::vector<fs::path> files;
  const std::string distill = kibench::manifest_digest(operation());
  for (const fs::path &file : kibench::list_workload_files(workloads_root)) {
    const json::Value manifest = json::parse_file(file);
    if (manifest.find("spec")->find("operationSpecDigest")->as_string() == distill) files.push_back(file);
  }
  REQUIRE(files.size() >= 11);
  std::set<std::string> names;
  for (const fs::path &file : files) {
    DYNAMIC_SECTION(file.lexically_relative(workloads_root).string()) {
      const Workload w = kibench::load_workload(file);
      const json::Value manifest = json::parse_file(file);
      const json::Value &spec = *manifest.find("spec");
      const json::Value &axes = *spec.find("axes");
      const json::Value &tensors = *spec.find("tensors");
      const json::Value &scalars = *spec.find("scalars");

      CHECK(w.source == file);
      CHECK(w.name == manifest.find("metadata")->find("name")->as_string());
      CHECK(w.manifest == manifest);
      CHECK(kibench::manifest_digest(w.operation) == spec.find("operationSpecDigest")->as_string());
      CHECK(w.tokens == axes.find("tokens")->as_int());
      CHECK(w.vocab == axes.find("vocab")->as_int());
      CHECK(w.hidden == axes.find("hidden")->as_int());
      CHECK(w.student_hidden == w.hidden / 2);
      CHECK(w.dtype == kibench::FloatType::bf16);

      check_generator(w.student_input, *tensors.find("student_input"));
      check_generator(w.student_weight, *tensors.find("student_weight"));
      check_generator(w.teacher_input, *tensors.find("teacher_input"));
      check_generator(w.teacher_weight, *tensors.find("teacher_weight"));
      check_generator(w.target, *tensors.find("target"));
      CHECK(w.student_bias.has_value() == tensors.as_object().contains("student_bias"));
      CHECK(w.teacher_bias.has_value() == tensors.as_object().contains("teacher_bias"));
      if (w.student_bias) check_generator(*w.student_bias, *tensors.find("student_bias"));
      if (w.teacher_bias) check_generator(*w.teacher_bias, *tensors.find("teacher_bias"));

      CHECK(w.scalars.beta == scalars.find("beta")->find("value")->as_number());
      CHECK(w.scalars.temperature == scalars.find("temperature")->find("value")->as_number());
      CHECK(w.scalars.weight_hard == scalars.find("weight_hard_loss")->find("value")->as_number());
      CHECK(w.scalars.weight_soft == scalars.find("weight_soft_loss")->find("value")->as_number());
      CHECK(w.scalars.ignore_index == scalars.find("ignore_index")->find("value")->as_int());
      CHECK(w.correctness.comparator == "fp64_oracle_loss_rel_abs_grads_rel_l2");
      CHECK(w.correctness.nan_policy == "reject");
      CHECK(w.correctness.infinity_policy == "reject");

      // Each tensor its own stream: equal seeds would correlate inputs.
      std::set<std::uint64_t> seeds{w.student_input.seed, w.student_weight.seed, w.teacher_input.seed,
                                    w.teacher_weight.seed, w.target.seed};
      if (w.student_bias) seeds.insert(w.student_bias->seed);
      if (w.teacher_bias) seeds.insert(w.teacher_bias->seed);
      CHECK(seeds.size() == 5u + (w.student_bias ? 1u : 0u) + (w.teacher_bias ? 1u : 0u));
    }
  }
  for (const fs::path &file : files) names.insert(kibench::load_workload(file).name);
  CHECK(names.size() == files.size()); // metadata.name tells the workloads apart
}

TEST_CASE("the operation file is KernelIndex's, byte for byte and by digest", "[workload][digest]") {
  const fs::path shipped = workloads_root / "operations" / "distill_jsd_loss.json";
  const fs::path liger = liger_dir / "operation-distill_jsd_loss.json";
  CHECK(read_bytes(shipped) == read_bytes(liger));

  const json::Value record =
      json::parse_file(kibench::test::test_data_dir() / "liger" / "seed-row-canonical-manifests.json");
  const std::string kernelindex_operation_digest =
      record.find("WorkloadCase")->find("spec")->find("operationSpecDigest")->as_string();
  CHECK(kibench::manifest_digest(json::parse_file(liger)) == kernelindex_operation_digest);

  const Workload seed = kibench::load_workload(seed_file());
  CHECK(seed.manifest.find("spec")->find("operationSpecDigest")->as_string() == kernelindex_operation_digest);
  CHECK(kibench::manifest_digest(seed.operation) == kernelindex_operation_digest);
  // Our seed workload adds generators, scalars and a correctness policy to
  // the imported record's bare shapes, so it is a different WorkloadCase.
  const std::string record_workload_digest =
      record.find("BenchmarkRun")->find("spec")->find("workloadDigest")->as_string();
  CHECK(kibench::manifest_digest(seed.manifest) != record_workload_digest);
}

TEST_CASE("the seed workload is the seed record's case with its harness's inputs", "[workload]") {
  const Workload w = kibench::load_workload(seed_file());
  CHECK(w.name == "distill-jsd-loss-hidden4096-tokens8192-vocab128256-bf16");
  CHECK(w.tokens == 8192);
  CHECK(w.vocab == 128256);
  CHECK(w.hidden == 4096);
  CHECK(w.student_hidden == 2048);
  // torch.rand: uniform [0, 1).
  for (const auto *input : {&w.student_input, &w.teacher_input}) {
    CHECK(input->name == "philox4x32_10_uniform");
    CHECK(input->low == 0.0);
    CHECK(input->high == 1.0);
  }
  // nn.Linear's default init: uniform +-1/sqrt(fan_in), fan_in = Hs or H.
  CHECK(w.student_weight.name == "philox4x32_10_uniform");
  CHECK(w.student_weight.high == Approx(1.0 / std::sqrt(2048.0)).epsilon(1e-15));
  CHECK(w.student_weight.low == -w.student_weight.high);
  CHECK(w.teacher_weight.high == 1.0 / 64.0);
  CHECK(w.teacher_weight.low == -1.0 / 64.0);
  // randint(0, V): none ignored.
  CHECK(w.target.name == "philox4x32_10_uniform_int");
  CHECK(w.target.low == 0.0);
  CHECK(w.target.high == 128256.0);
  CHECK(w.target.ignore_fraction == 0.0);
  CHECK_FALSE(w.student_bias);
  CHECK_FALSE(w.teacher_bias);
  CHECK(w.scalars.beta == 0.5);
  CHECK(w.scalars.temperature == 1.0);
  CHECK(w.scalars.weight_hard == 0.5);
  CHECK(w.scalars.weight_soft == 0.5);
  CHECK(w.scalars.ignore_index == -100);
  CHECK(w.correctness.max_relative_error == 1e-2);
  CHECK(w.correctness.max_absolute_error == 1e-6);
}

TEST_CASE("the small workloads cover the odd cases", "[workload]") {
  const auto load = [](const char *name) { return kibench::load_workload(workloads_root / "small" / name); };
  const Workload base = load("small-v1000-h64-t32.json");
  CHECK(base.tokens == 32);
  CHECK(base.vocab == 1000);
  CHECK(base.hidden == 64);
  CHECK(base.student_hidden == 32);

  CHECK(load("small-v1003-h64-t32-odd-vocab.json").vocab % 8 != 0);
  CHECK(load("small-v1000-h64-t1-single-token.json").tokens == 1);
  CHECK(load("small-v1000-h64-t32-all-ignored.json").target.ignore_fraction == 1.0);
  CHECK(load("small-v1000-h64-t32-ignore25.json").target.ignore_fraction == 0.25);
  CHECK(load("small-v1000-h64-t32-beta0-forward-kl.json").scalars.beta == 0.0);
  CHECK(load("small-v1000-h64-t32-beta1-reverse-kl.json").scalars.beta == 1.0);
  CHECK(load("small-v1000-h64-t32-tau2.json").scalars.temperature == 2.0);
  const Workload bias = load("small-v1000-h64-t32-bias.json");
  REQUIRE(bias.student_bias);
  REQUIRE(bias.teacher_bias);
  CHECK(bias.student_bias->high == Approx(1.0 / std::sqrt(32.0)).epsilon(1e-15));
  CHECK(bias.teacher_bias->high == 1.0 / 8.0);
}

TEST_CASE("input bytes and GEMM flops follow from the axes", "[workload]") {
  const Workload seed = kibench::load_workload(seed_file());
  // docs/loss-math.md: z_s 4.30, z_t 8.61, grad x_s 4.30, grad W_s 4.30 TFLOP.
  CHECK(seed.gemm_flops(false) == Approx(4.30e12 + 8.61e12).epsilon(1e-3));
  CHECK(seed.gemm_flops(true) == Approx(21.52e12).epsilon(1e-3));
  // bf16 x_s [8192, 2048], W_s [128256, 2048], x_t [8192, 4096],
  // W_t [128256, 4096]; int64 target [8192].
  CHECK(seed.input_bytes() ==
        2ull * (8192 * 2048 + 128256 * 2048 + 8192 * 4096 + 128256 * 4096) + 8ull * 8192);

  const Workload bias = kibench::load_workload(workloads_root / "small" / "small-v1000-h64-t32-bias.json");
  CHECK(bias.input_bytes() == 2ull * (32 * 32 + 1000 * 32 + 32 * 64 + 1000 * 64 + 1000 + 1000) + 8ull * 32);
  CHECK(bias.gemm_flops(true) == 2.0 * 32 * 1000 * (32 + 64) + 4.0 * 32 * 1000 * 32);
}

TEST_CASE("workload_from_json accepts the boundaries and rejects just past them", "[workload]") {
  const json::Value base = json::parse_file(small_default());
  REQUIRE(rejection(base).empty());

  SECTION("student_hidden may be stated when it equals hidden // 2") {
    json::Value edited = base;
    at(edited, {"spec", "axes"}).as_object().set("student_hidden", 32);
    CHECK(rejection(edited).empty());
    at(edited, {"spec", "axes"}).as_object().set("student_hidden", 33);
    CHECK_THAT(rejection(edited),
               Catch::Contains("edited.json: $.spec.axes.student_hidden: student_hidden = 33 "
                               "does not match hidden // 2 = 32"));
  }
  SECTION("an odd hidden floors: H = 65 gives Hs = 32") {
    json::Value edited = base;
    at(edited, {"spec", "axes", "hidden"}) = 65;
    at(edited, {"spec", "tensors", "teacher_input", "shape"}) = json::Array{32, 65};
    at(edited, {"spec", "tensors", "teacher_weight", "shape"}) = json::Array{1000, 65};
    REQUIRE(rejection(edited).empty());
    CHECK(kibench::workload_from_json(edited, operation(), "x.json").student_hidden == 32);
  }
  SECTION("beta at 0 and 1, a negative temperature, zero weights and tolerances") {
    json::Value edited = base;
    for (const double beta : {0.0, 1.0}) {
      at(edited, {"spec", "scalars", "beta", "value"}) = beta;
      CHECK(rejection(edited).empty());
    }
    at(edited, {"spec", "scalars", "beta", "value"}) = std::nextafter(1.0, 2.0);
    CHECK_THAT(rejection(edited),
               Catch::Contains("$.spec.scalars.beta.value: beta = 1.0000000000000002 is outside [0, 1]"));
    at(edited, {"spec", "scalars", "beta", "value"}) = 0.5;
    at(edited, {"spec", "scalars", "temperature", "value"}) = -2.0;
    CHECK(rejection(edited).empty());
    at(edited, {"spec", "scalars", "weight_hard_loss", "value"}) = 0.0;
    at(edited, {"spec", "correctness", "maxAbsoluteError"}) = 0.0;
    CHECK(rejection(edited).empty());
  }
  SECTION("target ids: a subrange of the vocabulary; ignore_index just outside it") {
    json::Value edited = base;
    at(edited, {"spec", "tensors", "target", "data", "parameters", "low"}) = 999;
    CHECK(rejection(edited).empty());
    at(edited, {"spec", "scalars", "ignore_index", "value"}) = 1000;
    CHECK(rejection(edited).empty());
    at(edited, {"spec", "scalars", "ignore_index", "value"}) = 999;
    CHECK_THAT(rejection(edited), Catch::Contains("ignore_index = 999 is a class id in [0, 1000)"));
  }
  SECTION("the largest axis is accepted until the sizes overflow") {
    json::Value edited = base;
    at(edited, {"spec", "axes", "tokens"}) = 2147483647;
    at(edited, {"spec", "tensors", "student_input", "shape"}) = json::Array{2147483647, 32};
    at(edited, {"spec", "tensors", "teacher_input", "shape"}) = json::Array{2147483647, 64};
    at(edited, {"spec", "tensors", "target", "shape"}) = json::Array{2147483647};
    const Workload huge = kibench::workload_from_json(edited, operation(), "huge.json");
    CHECK(huge.input_bytes() ==
          2ull * (2147483647ull * 32 + 1000 * 32 + 2147483647ull * 64 + 1000 * 64) + 8ull * 2147483647ull);
  }
  SECTION("a document built in code with a non-finite number is rejected, not read") {
    json::Value edited = base;
    at(edited, {"spec", "scalars", "temperature", "value"}) = std::numeric_limits<double>::infinity();
    CHECK_THAT(rejection(edited),
               Catch::Contains("$.spec.scalars.temperature.value: expected a finite number"));
  }
  SECTION("unknown keys with control characters stay on one line") {
    json::Value edited = base;
    at(edited, {"spec", "axes"}).as_object().set("bad\nkey", 1);
    const std::string message = rejection(edited);
    CHECK_THAT(message, Catch::Contains("unknown axis \"bad\\nkey\""));
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("workload_from_json checks the OperationSpec it is given", "[workload]") {
  const json::Value base = json::parse_file(small_default());

  SECTION("a different operation than the digest names") {
    const json::Value jsd = json::parse_file(liger_dir / "operation-jsd.json");
    CHECK_THAT(rejection(base, jsd), Catch::Contains("$.spec.operationSpecDigest: sha256:4ce30dbf") &&
                                         Catch::Contains("is not the digest of the OperationSpec given (" +
                                                         kibench::manifest_digest(jsd)));
  }
  SECTION("another operation kibench runs, named by its own digest: its signature binds the shapes") {
    const json::Value fused = json::parse_file(liger_dir / "operation-fused_linear_jsd.json");
    json::Value edited = base;
    at(edited, {"spec", "operationSpecDigest"}) = kibench::manifest_digest(fused);
    CHECK_THAT(rejection(edited, fused),
               Catch::Contains("$.spec.tensors.student_input.shape: shape [32, 32] does not match "
                               "[tokens, hidden] = [32, 64]"));
  }
  SECTION("an operation kibench does not run, named by its own digest") {
    json::Value other = json::parse_file(liger_dir / "operation-fused_linear_jsd.json");
    at(other, {"spec", "inputs"}).as_array().pop_back();
    json::Value edited = base;
    at(edited, {"spec", "operationSpecDigest"}) = kibench::manifest_digest(other);
    CHECK_THAT(rejection(edited, other), Catch::Contains("kibench runs distill_jsd_loss"));
  }
  SECTION("shapes come from the operation's own signature") {
    // An edited operation where student_hidden = hidden // 4: the same
    // workload's student shapes no longer match.
    json::Value quarter = operation();
    at(quarter, {"spec", "axes", "student_hidden", "expression"}) = "hidden // 4";
    json::Value edited = base;
    at(edited, {"spec", "operationSpecDigest"}) = kibench::manifest_digest(quarter);
    CHECK_THAT(rejection(edited, quarter),
               Catch::Contains("$.spec.tensors.student_input.shape: shape [32, 32] does not match "
                               "[tokens, student_hidden] = [32, 16]"));
  }
}

TEST_CASE("load_workload finds the OperationSpec by digest", "[workload]") {
  const TempTree tree;
  const std::string small = read_bytes(small_default());
  const std::string op = read_bytes(workloads_root / "operations" / "distill_jsd_loss.json");

  SECTION("beside the file, or in a parent's operations/ inside the workloads root") {
    tree.write("root/operations/op.json", op);
    tree.write("root/a/b/case.json", small);
    const ScopedEnv env("KIBENCH_WORKLOADS", (tree.path() / "root").string());
    const Workload w = kibench::load_workload(tree.path() / "root" / "a" / "b" / "case.json");
    CHECK(w.vocab == 1000);
    // A nearer operations/ folder is read first, and a broken file there is
    // reported rather than skipped.
    tree.write("root/a/operations/broken.json", "{");
    CHECK_THROWS_WITH(kibench::load_workload(tree.path() / "root" / "a" / "b" / "case.json"),
                      Catch::Contains("broken.json") && Catch::Contains("invalid JSON"));
  }
  SECTION("outside the workloads root: beside it, else the root's operations/") {
    tree.write("elsewhere/case.json", small);
    const ScopedEnv env("KIBENCH_WORKLOADS", workloads_root.string());
    CHECK(kibench::load_workload(tree.path() / "elsewhere" / "case.json").vocab == 1000);
  }
  SECTION("an unknown digest names the folders searched") {
    tree.write("root/operations/op.json", op);
    std::string unknown = small;
    unknown.replace(unknown.find("sha256:4ce30dbf"), 15, "sha256:00000000");
    tree.write("root/case.json", unknown);
    const ScopedEnv env("KIBENCH_WORKLOADS", (tree.path() / "root").string());
    const fs::path file = tree.path() / "root" / "case.json";
    CHECK_THROWS_WITH(kibench::load_workload(file),
                      Catch::Contains(file.string() +
                                      ": $.spec.operationSpecDigest: no OperationSpec with digest "
                                      "sha256:00000000") &&
                          Catch::Contains((tree.path() / "root" / "operations").string()));
  }
}

TEST_CASE("list_workload_files and default_workloads_dir", "[workload]") {
  const TempTree tree;
  tree.write("b.json", "{}");
  tree.write("a/z.json", "{}");
  tree.write("a/notes.txt", "");
  tree.write("operations/op.json", "{}");
  tree.write("a/operations/op.json", "{}");
  CHECK(kibench::list_workload_files(tree.path()) ==
        std::vector<fs::path>{tree.path() / "a" / "z.json", tree.path() / "b.json"});
  CHECK_THROWS_AS(kibench::list_workload_files(tree.path() / "missing"), InputError);

  {
    const ScopedEnv env("KIBENCH_WORKLOADS", "/some/where");
    CHECK(kibench::default_workloads_dir() == fs::path("/some/where"));
  }
  {
    const ScopedEnv env("KIBENCH_WORKLOADS", std::nullopt);
    const ScopedCwd cwd(tree.path());
    // kibench's own, found beside the binary: the build tree's mirror of
    // the source's workloads (lib/io/data_dir.hpp).
    const auto data = kibench::io::data_directory();
    REQUIRE(data.has_value());
    CHECK(kibench::default_workloads_dir() == *data / "workloads");
    CHECK(read_bytes(*data / "workloads" / "small" / "small-v1000-h64-t32.json") ==
          read_bytes(workloads_root / "small" / "small-v1000-h64-t32.json"));
    fs::create_directories(tree.path() / "workloads");
    CHECK(kibench::default_workloads_dir() == fs::path("workloads"));
  }
}
