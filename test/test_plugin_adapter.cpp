// The plugin loader and adapter through their C++ API, with a plugin
// description defined here (as a host program like the Python package
// supplies one): validation of the description, the revision facts, and
// the host adapter's calls, poisoning and output checks.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <vector>

#include "kernels/plugin/plugin_catalog.hpp"
#include "kernels/plugin/plugin_implementation.hpp"
#include "kernels/builtin_revision.hpp"
#include "lib/error.hpp"
#include "lib/implementation/implementation_failure.hpp"
#include "lib/inputs/input_set.hpp"
#include "lib/io/text_rules.hpp"
#include "lib/json/canonical.hpp"
#include "lib/manifest/implementation_manifest.hpp"
#include "lib/workload/workload.hpp"
#include "test/source_tree.hpp"
#include "lib/operations/registry.hpp"

namespace fs = std::filesystem;
using namespace kibench;
using namespace kibench::plugin;

namespace {

const fs::path kSource = kibench::test::source_dir();

// One lane whose outputs are a host buffer it owns; what it saw is kept
// for the checks.
struct Seen {
  int prepares = 0, runs = 0, releases = 0, poisons = 0;
  int last_pass = -1;
  kibench_plugin_inputs inputs{};
  std::vector<float> grad_input, grad_weight;
  bool fail_create = false;
  int32_t shape_columns_delta = 0;
  std::string create_message = "no state today";
};
Seen seen;

void *create(void *, char *message) {
  if (seen.fail_create) {
    std::snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "%s", seen.create_message.c_str());
    return nullptr;
  }
  return &seen;
}
void destroy(void *) {}
int32_t unsupported(void *, const kibench_workload_info *info, int32_t pass, char *message) {
  if (pass == KIBENCH_PASS_BACKWARD) {
    std::snprintf(message, KIBENCH_PLUGIN_MESSAGE_BYTES, "no backward for T=%lld",
                  static_cast<long long>(info->tokens));
    return KIBENCH_PLUGIN_UNSUPPORTED;
  }
  return KIBENCH_PLUGIN_OK;
}
int32_t prepare(void *state, const kibench_plugin_inputs *inputs, char *) {
  auto &s = *static_cast<Seen *>(state);
  s.prepares += 1;
  s.inputs = *inputs;
  s.grad_input.assign(static_cast<std::size_t>(inputs->info.tokens * inputs->info.student_hidden), 0.0f);
  s.grad_weight.assign(static_cast<std::size_t>(inputs->info.vocab * inputs->info.student_hidden), 0.0f);
  return KIBENCH_PLUGIN_OK;
}
int32_t run(void *state, int32_t pass, void *, char *) {
  auto &s = *static_cast<Seen *>(state);
  s.runs += 1;
  s.last_pass = pass;
  std::fill(s.grad_input.begin(), s.grad_input.end(), 0.5f); // grad_weight stays as it was
  return KIBENCH_PLUGIN_OK;
}
int32_t outputs(void *state, kibench_outputs *out, char *) {
  auto &s = *static_cast<Seen *>(state);
  const auto &info = s.inputs.info;
  *out = kibench_outputs{};
  out->loss = 1.25;
  out->grad_student_input = {
      s.grad_input.data(), KIBENCH_DTYPE_FP32, 0, 2, {info.tokens, info.student_hidden}};
  out->grad_student_weight = {s.grad_weight.data(),
                              KIBENCH_DTYPE_FP32,
                              0,
                              2,
                              {info.vocab, info.student_hidden + s.shape_columns_delta}};
  return KIBENCH_PLUGIN_OK;
}
int32_t poison(void *state, void *, char *) {
  static_cast<Seen *>(state)->poisons += 1;
  return KIBENCH_PLUGIN_OK;
}
int32_t release(void *state, char *) {
  static_cast<Seen *>(state)->releases += 1;
  return KIBENCH_PLUGIN_OK;
}

const char *const kArchitectures[] = {"x86_64", nullptr};
const kibench_plugin_pair kRequirements[] = {{"torch", "2.11.0"}, {"liger_kernel", "0.6.4"}};
const kibench_plugin_pair kLabels[] = {{"backend", "host"}};

kibench_plugin_implementation lane() {
  kibench_plugin_implementation i{};
  i.name = "host-lane";
  i.summary = "a lane of the test";
  i.needs_gpu = 0;
  i.computes_loss = 1;
  i.revision.name = "test-host-lane";
  i.revision.title = "A host lane";
  i.revision.language = "cpp";
  i.revision.version = "2.0.0";
  i.revision.commit = "0123456789abcdef0123456789abcdef01234567";
  i.revision.licence = "MIT";
  i.revision.architectures = kArchitectures;
  i.revision.package = "testpkg";
  i.revision.package_version = "2.0.0";
  i.revision.requirements = kRequirements;
  i.revision.requirement_count = 2;
  i.revision.labels = kLabels;
  i.revision.label_count = 1;
  i.create = create;
  i.destroy = destroy;
  i.unsupported = unsupported;
  i.prepare = prepare;
  i.run = run;
  i.outputs = outputs;
  i.poison = poison;
  i.release = release;
  return i;
}

PluginCatalog catalog_of(const kibench_plugin_implementation &i) {
  static kibench_plugin_implementation keep;
  keep = i;
  static kibench_plugin plugin;
  plugin = kibench_plugin{KIBENCH_PLUGIN_ABI_VERSION, "test", 1, &keep};
  return PluginCatalog({}, {{&plugin, "test-host"}}, {"cpu-reference"});
}

} // namespace

TEST_CASE("a plugin description becomes validated catalog entries with its revision facts", "[plugin]") {
  const PluginCatalog catalog = catalog_of(lane());
  REQUIRE(catalog.entries().size() == 1);
  const auto entry = catalog.find("host-lane");
  REQUIRE(entry != nullptr);
  CHECK(catalog.find("other") == nullptr);
  CHECK(entry->origin == "test-host");
  CHECK_FALSE(entry->needs_gpu);
  const RevisionFacts &f = entry->facts;
  CHECK(f.name == "test-host-lane");
  CHECK(f.interface == "kibench_plugin");
  CHECK(f.source.commit == "0123456789abcdef0123456789abcdef01234567");
  CHECK(f.licence == "MIT");
  CHECK(f.dtypes == std::vector<std::string>{"bf16"});
  REQUIRE(f.package);
  CHECK(f.package->requirements.at("liger_kernel") == "0.6.4");
  CHECK(f.labels.at("backend") == "host");
  const std::string manifest = json::pretty(implementation_manifest(f));
  CHECK(manifest.find("\"liger_kernel\": \"0.6.4\"") != std::string::npos);
}

TEST_CASE("a plugin description is refused for what the manifest or the run cannot take", "[plugin]") {
  auto i = lane();
  SECTION("a malformed name") {
    i.name = "Host Lane";
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("implementations[0].name \"Host Lane\": must match"));
  }
  SECTION("a built-in's name") {
    i.name = "cpu-reference";
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("a built-in implementation has this name"));
  }
  SECTION("a missing outputs function") {
    i.outputs = nullptr;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("implementation \"host-lane\": outputs is NULL"));
  }
  SECTION("a requirement key outside the schema's pattern") {
    static const kibench_plugin_pair dashed[] = {{"liger-kernel", "0.6.4"}};
    i.revision.requirements = dashed;
    i.revision.requirement_count = 1;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("requirements key \"liger-kernel\""));
  }
  SECTION("requirements without a package") {
    i.revision.package = nullptr;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("revision.requirements need revision.package"));
  }
  SECTION("a commit that is not 40 hex digits") {
    i.revision.commit = "abc";
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("spec.projectRevision.commit"));
  }
  SECTION("no version") {
    i.revision.version = nullptr;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("spec.projectRevision.version"));
  }
  SECTION("an operation kibench does not run") {
    static const char *const unknown[] = {"jsd", "softmax", nullptr};
    i.operations = unknown;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Equals("test-host: implementation \"host-lane\": operations[1] "
                                                   "\"softmax\": not an operation kibench runs "
                                                   "(distill_jsd_loss, jsd, fused_linear_jsd)"));
  }
  SECTION("an operation listed twice") {
    static const char *const twice[] = {"jsd", "jsd", nullptr};
    i.operations = twice;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("operations[1] \"jsd\": listed twice"));
  }
  SECTION("an empty operation list") {
    static const char *const none[] = {nullptr};
    i.operations = none;
    CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("operations is empty (NULL means distill_jsd_loss)"));
  }
  SECTION("another ABI version") {
    static kibench_plugin_implementation keep = lane();
    static kibench_plugin other{7, "test", 1, &keep};
    CHECK_THROWS_WITH(
        PluginCatalog({}, {{&other, "test-host"}}, {}),
        Catch::Contains("test-host: kibench_plugin_entry: plugin ABI version 7, this kibench speaks 1 to 2"));
  }
}

TEST_CASE("the host adapter calls the plugin on kibench's inputs and poisons what it exposes", "[plugin]") {
  seen = Seen{};
  const PluginCatalog catalog = catalog_of(lane());
  const Workload workload = load_workload(kSource / "workloads/small/small-v1000-h64-t32.json");
  InputSet inputs(workload);
  auto impl = make_plugin_implementation(catalog.find("host-lane"), PluginRunSettings{Pass::full, 7.5, Isolation::automatic, {}});
  CHECK(impl->name() == "host-lane");
  CHECK_FALSE(impl->needs_gpu());
  CHECK_FALSE(impl->unsupported_for(workload, Pass::full));
  CHECK(impl->unsupported_for(workload, Pass::backward) == std::string("no backward for T=32"));

  impl->prepare(workload, inputs);
  CHECK(seen.prepares == 1);
  CHECK(seen.inputs.timeout_s == 7.5);
  CHECK(seen.inputs.stream == nullptr);
  CHECK(seen.inputs.student_input.data == inputs.host().student_input.data());
  CHECK(seen.inputs.target.dtype == KIBENCH_DTYPE_INT64);
  CHECK(seen.inputs.student_bias.data == nullptr);
  CHECK(seen.inputs.info.vocab == 1000);

  impl->poison_outputs();
  CHECK(seen.poisons == 1);
  std::uint32_t bits = 0;
  std::memcpy(&bits, seen.grad_weight.data(), sizeof bits);
  CHECK(bits == 0xFFFFFFFFu); // NaN: a run that leaves it unwritten fails the check

  impl->run(Pass::full);
  CHECK(seen.last_pass == KIBENCH_PASS_FULL);
  const OutputView out = impl->outputs();
  CHECK(out.loss == 1.25);
  CHECK(out.grad_student_input.count == 32 * 32);
  CHECK(out.grad_student_weight.type == ElementType::fp32);
  CHECK_FALSE(out.grad_student_weight.on_device);
  CHECK(out.grad_student_bias.empty());
  // Without a memory() function: the inputs and the outputs it exposed.
  const MemoryUse use = impl->memory();
  CHECK(use.output_bytes == sizeof(double) + (32 * 32 + 1000 * 32) * sizeof(float));
  CHECK(use.peak_bytes == use.input_bytes + use.output_bytes);

  SECTION("an output of the wrong shape is incorrect_shape") {
    seen.shape_columns_delta = 1;
    try {
      (void)impl->outputs();
      FAIL("no failure");
    } catch (const ImplementationFailure &e) {
      CHECK(e.status() == RunStatus::incorrect_shape);
      CHECK(std::string(e.what()) == "host-lane: outputs: grad_student_weight has shape [1000, 33], the "
                                     "workload's is [1000, 32]");
    }
  }
  SECTION("a forward run's outputs are the loss alone") {
    impl->run(Pass::forward);
    CHECK(impl->outputs().grad_student_input.empty());
  }
  impl->release();
  CHECK(seen.releases == 1);
}

TEST_CASE("a plugin whose create fails is a runtime_error naming the call", "[plugin]") {
  seen = Seen{};
  seen.fail_create = true;
  const PluginCatalog catalog = catalog_of(lane());
  const Workload workload = load_workload(kSource / "workloads/small/small-v1000-h64-t32.json");
  InputSet inputs(workload);
  auto impl = make_plugin_implementation(catalog.find("host-lane"), {});
  try {
    impl->prepare(workload, inputs);
    FAIL("no failure");
  } catch (const ImplementationFailure &e) {
    CHECK(e.status() == RunStatus::runtime_error);
    CHECK(std::string(e.what()) == "host-lane: create: no state today");
  }
}

TEST_CASE("a plugin runs the operations it declares, and its revision names the workload's", "[plugin]") {
  auto i = lane();
  SECTION("by default distill_jsd_loss alone") {
    const PluginCatalog catalog = catalog_of(i);
    auto impl = make_plugin_implementation(catalog.find("host-lane"), {});
    CHECK(impl->runs(operation_named("distill_jsd_loss")));
    CHECK_FALSE(impl->runs(operation_named("jsd")));
    CHECK_FALSE(impl->runs(operation_named("fused_linear_jsd")));
    CHECK(impl->revision().operation_digest == kDistillJsdLossOperationDigest);
  }
  SECTION("the declared ones") {
    static const char *const declared[] = {"fused_linear_jsd", "jsd", nullptr};
    i.operations = declared;
    const PluginCatalog catalog = catalog_of(i);
    auto impl = make_plugin_implementation(catalog.find("host-lane"), {});
    CHECK_FALSE(impl->runs(operation_named("distill_jsd_loss")));
    CHECK(impl->runs(operation_named("jsd")));
    CHECK(impl->runs(operation_named("fused_linear_jsd")));
    CHECK(impl->revision_for(operation_named("jsd")).operation_digest == kJsdOperationDigest);
    CHECK(impl->revision_for(operation_named("fused_linear_jsd")).operation_digest ==
          kFusedLinearJsdOperationDigest);
    CHECK(other_operation(*impl, load_workload(kSource / "workloads/small/small-v1000-h64-t32.json")) ==
          std::string("host-lane does not compute distill_jsd_loss"));
  }
}

namespace {

// A jsd lane: its output is the gradient of the student log-probabilities.
struct SeenJsd {
  kibench_plugin_inputs inputs{};
  std::vector<float> grad;
  bool extra_weight = false;
};
SeenJsd seen_jsd;

int32_t jsd_prepare(void *, const kibench_plugin_inputs *inputs, char *) {
  seen_jsd.inputs = *inputs;
  seen_jsd.grad.assign(static_cast<std::size_t>(inputs->info.tokens * inputs->info.vocab), 0.0f);
  return KIBENCH_PLUGIN_OK;
}
int32_t jsd_run(void *, int32_t, void *, char *) {
  std::fill(seen_jsd.grad.begin(), seen_jsd.grad.end(), 0.25f);
  return KIBENCH_PLUGIN_OK;
}
int32_t jsd_outputs(void *, kibench_outputs *out, char *) {
  const auto &info = seen_jsd.inputs.info;
  *out = kibench_outputs{};
  out->loss = 0.5;
  out->grad_student_input = {seen_jsd.grad.data(), KIBENCH_DTYPE_FP32, 0, 2, {info.tokens, info.vocab}};
  if (seen_jsd.extra_weight) out->grad_student_weight = out->grad_student_input;
  return KIBENCH_PLUGIN_OK;
}

} // namespace

TEST_CASE("a jsd lane gets the log-probabilities and returns their gradient", "[plugin]") {
  seen = Seen{};
  seen_jsd = SeenJsd{};
  auto i = lane();
  static const char *const declared[] = {"jsd", nullptr};
  i.operations = declared;
  i.unsupported = nullptr;
  i.prepare = jsd_prepare;
  i.run = jsd_run;
  i.outputs = jsd_outputs;
  const PluginCatalog catalog = catalog_of(i);
  auto impl = make_plugin_implementation(catalog.find("host-lane"), {});

  SECTION("without labels the target is absent") {
    const Workload workload = load_workload(kSource / "workloads/jsd/small/jsd-small-t32-v1000.json");
    InputSet inputs(workload);
    impl->prepare(workload, inputs);
    const auto &in = seen_jsd.inputs;
    CHECK(in.operation == KIBENCH_OPERATION_JSD);
    CHECK(std::string(in.operation_name) == "jsd");
    CHECK(in.student_log_probs.data == inputs.host().student_log_probs.data());
    CHECK(in.teacher_log_probs.data == inputs.host().teacher_log_probs.data());
    CHECK(in.student_log_probs.dtype == KIBENCH_DTYPE_FP32);
    CHECK(in.student_log_probs.shape[0] == 32);
    CHECK(in.student_log_probs.shape[1] == 1000);
    CHECK(in.target.data == nullptr);
    CHECK(in.student_input.data == nullptr);
    CHECK(in.student_weight.data == nullptr);

    impl->poison_outputs();
    std::uint32_t bits = 0;
    std::memcpy(&bits, seen_jsd.grad.data(), sizeof bits);
    CHECK(bits == 0xFFFFFFFFu);
    impl->run(Pass::full);
    const OutputView out = impl->outputs();
    CHECK(out.loss == 0.5);
    CHECK(out.grad_student_input.count == 32 * 1000);
    CHECK(out.grad_student_weight.empty());

    seen_jsd.extra_weight = true;
    try {
      (void)impl->outputs();
      FAIL("no failure");
    } catch (const ImplementationFailure &e) {
      CHECK(e.status() == RunStatus::incorrect_shape);
      CHECK(std::string(e.what()) == "host-lane: outputs: grad_student_weight given, but a jsd workload has "
                                     "one gradient, of the student log-probabilities (grad_student_input)");
    }
  }
  SECTION("with labels the target is there") {
    const Workload workload = load_workload(kSource / "workloads/jsd/small/jsd-small-t32-v1000-ignore25.json");
    InputSet inputs(workload);
    impl->prepare(workload, inputs);
    CHECK(seen_jsd.inputs.target.data == inputs.host().target.data());
    CHECK(seen_jsd.inputs.target.shape[0] == 32);
  }
  impl->release();
}

TEST_CASE("a plugin's name of any length is checked without a crash and named briefly", "[plugin][text-rules]") {
  // 100 000 characters overflowed std::regex_match's stack (SIGSEGV).
  const std::string long_name(100000, 'a');
  auto i = lane();
  i.name = long_name.c_str();
  CHECK_THROWS_WITH(catalog_of(i), Catch::Contains("implementations[0].name \"" + std::string(80, 'a') +
                                                   "… (100000 bytes)\": must match"));
}

TEST_CASE("a plugin's message is cut between characters and repaired to UTF-8", "[plugin][text-rules][utf8]") {
  const PluginCatalog catalog = catalog_of(lane());
  const Workload workload = load_workload(kSource / "workloads/small/small-v1000-h64-t32.json");
  InputSet inputs(workload);
  const auto reason_for = [&](const std::string &message) {
    seen = Seen{};
    seen.fail_create = true;
    seen.create_message = message;
    auto impl = make_plugin_implementation(catalog.find("host-lane"), {});
    try {
      impl->prepare(workload, inputs);
    } catch (const ImplementationFailure &e) {
      return std::string(e.what());
    }
    FAIL("no failure");
    return std::string();
  };
  // "é" (C3 A9) across byte 297, where a long message is cut: the cut falls
  // before it, never between its two bytes.
  const std::string cut = reason_for(std::string(296, 'x') + "\xC3\xA9" + std::string(20, 'y'));
  CHECK(cut == "host-lane: create: " + std::string(296, 'x') + "...");
  CHECK(io::is_utf8(cut));
  // A byte that is not UTF-8 becomes U+FFFD.
  const std::string repaired = reason_for("bad \xC3 byte");
  CHECK(repaired == "host-lane: create: bad \xEF\xBF\xBD byte");
}
