// The CPU side of multi-GPU runs (kibench run --gpus, fused-vocab-parallel):
// the interconnect read from `nvidia-smi topo -m`, the protocol and
// environment a multi-GPU run records (and that a single-GPU run's stay as
// they were), the flag's refusals, NCCL's loader (when no NCCL is there,
// its prototypes and values against nccl.h where that is installed, and a
// library that loads), and the registry entry. The GPU side is test_gpu_vocab_parallel.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#if __has_include(<nccl.h>)
#include <nccl.h>
#endif

#include "kernels/cuda/gpu_available.hpp"
#include "kernels/cuda/multi_device_timer.hpp"
#include "kernels/cuda/nccl.hpp"
#include "kernels/registry.hpp"
#include "kernels/lm_head/vocab_parallel/multi_gpu_implementation.hpp"
#include "lib/digest/digest.hpp"
#include "lib/environment/environment.hpp"
#include "lib/environment/gpu_topology.hpp"
#include "lib/harness/protocol_settings.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/protocol_manifest.hpp"
#include "lib/workload/workload.hpp"
#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

using namespace kibench;
namespace fs = std::filesystem;

namespace {

// An HGX H200 board as `nvidia-smi topo -m` prints it: the header
// underlined with escape sequences, NIC and affinity columns after the GPUs.
const char *const kEightNvlinked =
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPXB\t0-63\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPXB\t0-63\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tSYS\t0-63\t0\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tSYS\t0-63\t0\t\tN/A\n"
    "GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tSYS\t64-127\t1\t\tN/A\n"
    "GPU5\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tSYS\t64-127\t1\t\tN/A\n"
    "GPU6\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tSYS\t64-127\t1\t\tN/A\n"
    "GPU7\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tSYS\t64-127\t1\t\tN/A\n"
    "\n"
    "Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

// Four PCIe GPUs on two sockets.
const char *const kFourPcie = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
                              "GPU0\t X \tPIX\tSYS\tSYS\t0-15\t0\n"
                              "GPU1\tPIX\t X \tSYS\tSYS\t0-15\t0\n"
                              "GPU2\tSYS\tSYS\t X \tPIX\t16-31\t1\n"
                              "GPU3\tSYS\tSYS\tPIX\t X \t16-31\t1\n";

} // namespace

TEST_CASE("parse_gpu_topology counts each pair's link among the run's GPUs", "[multi_gpu]") {
  const auto eight = parse_gpu_topology(kEightNvlinked, 8);
  REQUIRE(eight.has_value());
  CHECK(*eight == PairLinks{{"NV18", 28}});
  CHECK(describe_interconnect(*eight, 8) == "NV18 between every pair of GPUs 0-7 (nvidia-smi topo -m)");
  // The first two only.
  const auto two = parse_gpu_topology(kEightNvlinked, 2);
  REQUIRE(two.has_value());
  CHECK(*two == PairLinks{{"NV18", 1}});
  CHECK(describe_interconnect(*two, 2) == "NV18 between every pair of GPUs 0 and 1 (nvidia-smi topo -m)");

  const auto four = parse_gpu_topology(kFourPcie, 4);
  REQUIRE(four.has_value());
  CHECK(*four == PairLinks{{"PIX", 2}, {"SYS", 4}});
  CHECK(describe_interconnect(*four, 4) == "GPUs 0-3, pairs by link: PIX 2, SYS 4 (nvidia-smi topo -m)");
  const auto three = parse_gpu_topology(kFourPcie, 3);
  REQUIRE(three.has_value());
  CHECK(*three == PairLinks{{"PIX", 1}, {"SYS", 2}});
}

TEST_CASE("parse_gpu_topology gives nothing for a matrix without the run's GPUs", "[multi_gpu]") {
  CHECK_FALSE(parse_gpu_topology(kFourPcie, 5).has_value());  // no GPU4 column
  CHECK_FALSE(parse_gpu_topology("", 2).has_value());
  CHECK_FALSE(parse_gpu_topology("Failed to initialize NVML: Driver/library version mismatch\n", 2).has_value());
  // A row missing.
  CHECK_FALSE(parse_gpu_topology("\tGPU0\tGPU1\nGPU0\t X \tNV4\n", 2).has_value());
  // A diagonal that is not X: not a topology matrix.
  CHECK_FALSE(parse_gpu_topology("\tGPU0\tGPU1\nGPU0\tNV4\tNV4\nGPU1\tNV4\t X \n", 2).has_value());
  // One GPU: no pairs.
  CHECK(parse_gpu_topology("", 1) == PairLinks{});
}

TEST_CASE("a multi-GPU run's protocol names the GPU count; a single-GPU one is unchanged", "[multi_gpu]") {
  ProtocolSettings one;
  one.timer = "cuda_events";
  const json::Value single = protocol_manifest(one, "oracle-fp64", {});
  CHECK(one.method() == "cuda_events_cold_full");
  CHECK(json::string_at(single, "spec.measurement.synchronization") == "event_synchronize");
  CHECK(one.describe_gpus().empty());

  ProtocolSettings eight = one;
  eight.gpus = 8;
  const json::Value multi = protocol_manifest(eight, "oracle-fp64", {});
  CHECK(eight.method() == "cuda_events_cold_full_gpus8");
  CHECK(json::string_at(multi, "spec.comparability.family") == "kibench_cuda_events_cold_full_gpus8");
  CHECK(json::string_at(multi, "spec.measurement.synchronization") == "device_barrier_event_synchronize");
  const std::string description = json::string_at(multi, "metadata.description");
  CHECK(description.find("GPUs 0-7") != std::string::npos);
  CHECK(description.find("slowest GPU") != std::string::npos);
  // Different protocols: runs over 1 and 8 GPUs are no strict cohort.
  CHECK(manifest_digest(single) != manifest_digest(multi));
  // The notes (1000 characters at most) are the same sentences.
  CHECK(json::string_at(single, "spec.comparability.notes") == json::string_at(multi, "spec.comparability.notes"));
}

TEST_CASE("a multi-GPU environment records the interconnect and NCCL's variables, schema-valid", "[multi_gpu]") {
  EnvironmentFacts f;
  f.vendor = "nvidia";
  f.product = "NVIDIA H200";
  f.architecture = "sm_90";
  f.count = 8;
  const std::string single = canonical(environment_manifest(f));
  CHECK(single.find("interconnect") == std::string::npos);
  CHECK(single.find("environmentVariables") == std::string::npos);

  f.interconnect = describe_interconnect({{"NV18", 28}}, 8);
  f.libraries["nccl"] = "2.27.7";
  f.environment_variables["NCCL_NVLS_ENABLE"] = "0";
  const json::Value manifest = environment_manifest(f);
  CHECK(json::string_at(manifest, "spec.hardware.interconnect") ==
        "NV18 between every pair of GPUs 0-7 (nvidia-smi topo -m)");
  CHECK(json::string_at(manifest, "spec.settings.environmentVariables.NCCL_NVLS_ENABLE") == "0");
  CHECK(json::string_at(manifest, "spec.software.libraries.nccl") == "2.27.7");

  test::TempDir tmp;
  const fs::path file = tmp.path() / "environment.json";
  std::ofstream(file) << canonical(manifest);
  const fs::path source = kibench::test::source_dir();
  const std::string validate = "/usr/bin/python3 " + test::quoted(source / "test/schema/validate.py") + " " +
                               test::quoted(source / "test/data/kernelindex/schemas") + " " + test::quoted(file) +
                               " >/dev/null";
  CHECK(std::system(validate.c_str()) == 0);
}

TEST_CASE("kibench run --gpus refuses what it cannot hold, with exit 2 and nothing written", "[multi_gpu][cli]") {
  test::TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const fs::path small = kibench::test::source_dir() /
                         "workloads/small/small-v1000-h64-t32.json";
  const std::string base = "run " + test::quoted(small) + " --impl cpu-reference --out " + test::quoted(out);
  SECTION("zero") {
    const auto r = test::run_kibench(base + " --gpus 0");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--gpus") != std::string::npos);
  }
  SECTION("not a number") {
    const auto r = test::run_kibench(base + " --gpus two");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--gpus") != std::string::npos);
  }
  SECTION("more GPUs than the machine has") {
    const auto r = test::run_kibench(base + " --gpus 65");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--gpus") != std::string::npos);
    if (!gpu::gpu_available()) {
      const auto two = test::run_kibench(base + " --gpus 2");
      CHECK(two.exit_code == 2);
      CHECK(two.err.find("--gpus 2: no GPU") != std::string::npos);
    }
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("NCCL's loader names every place it looked", "[multi_gpu]") {
  const char *previous = std::getenv("KIBENCH_NCCL_LIBRARY");
  const std::string saved = previous != nullptr ? previous : "";
  ::setenv("KIBENCH_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  std::string why;
  CHECK(gpu::Nccl::load(why) == nullptr);
  CHECK(why.find("/nonexistent/libnccl.so.2") != std::string::npos);
  CHECK(why.find("KIBENCH_NCCL_LIBRARY") != std::string::npos);
  if (previous != nullptr) {
    ::setenv("KIBENCH_NCCL_LIBRARY", saved.c_str(), 1);
  } else {
    ::unsetenv("KIBENCH_NCCL_LIBRARY");
  }
}

TEST_CASE("NCCL's version codes read as nccl.h's NCCL_VERSION writes them", "[multi_gpu]") {
  CHECK(gpu::nccl_version_string(22809) == "2.28.9");
  CHECK(gpu::nccl_version_string(23007) == "2.30.7");
  CHECK(gpu::nccl_version_string(20900) == "2.9.0");
  // Up to 2.8 the minor version had one digit: X*1000 + Y*100 + Z.
  CHECK(gpu::nccl_version_string(2804) == "2.8.4");
  CHECK(gpu::nccl_version_string(2708) == "2.7.8");
}

#if __has_include(<nccl.h>)
namespace {

// nccl.h's types as the loader passes them (nccl_abi): its enums as int,
// ncclComm_t as void *.
template <class T> struct AsLoaded { using type = T; };
template <> struct AsLoaded<ncclResult_t> { using type = int; };
template <> struct AsLoaded<ncclResult_t *> { using type = int *; };
template <> struct AsLoaded<ncclDataType_t> { using type = int; };
template <> struct AsLoaded<ncclRedOp_t> { using type = int; };
template <> struct AsLoaded<ncclComm_t> { using type = void *; };
template <> struct AsLoaded<ncclComm_t *> { using type = void **; };
template <class R, class... A> struct AsLoaded<R (*)(A...)> {
  using type = typename AsLoaded<R>::type (*)(typename AsLoaded<A>::type...);
};
template <class F> using as_loaded = typename AsLoaded<F>::type;

} // namespace

TEST_CASE("the NCCL loader's prototypes and values are nccl.h's", "[multi_gpu]") {
  namespace abi = gpu::nccl_abi;
  static_assert(std::is_same_v<as_loaded<decltype(&ncclGetVersion)>, abi::GetVersion>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclCommInitAll)>, abi::CommInitAll>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclCommDestroy)>, abi::CommDestroy>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclAllReduce)>, abi::AllReduce>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclGroupStart)>, abi::GroupStart>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclGroupEnd)>, abi::GroupEnd>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclGetErrorString)>, abi::GetErrorString>);
  static_assert(std::is_same_v<as_loaded<decltype(&ncclCommGetAsyncError)>, abi::CommGetAsyncError>);
  // C enums passed as int, and a communicator as a pointer.
  CHECK(sizeof(ncclResult_t) == sizeof(int));
  CHECK(sizeof(ncclDataType_t) == sizeof(int));
  CHECK(sizeof(ncclRedOp_t) == sizeof(int));
  CHECK(sizeof(ncclComm_t) == sizeof(gpu::Nccl::Comm));
  CHECK(abi::kSuccess == ncclSuccess);
  CHECK(abi::kFloat32 == ncclFloat32);
  CHECK(abi::kSum == ncclSum);
  CHECK(abi::kMax == ncclMax);
  CHECK(gpu::nccl_version_string(NCCL_VERSION_CODE) == fmt::format("{}.{}.{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH));
  CHECK(gpu::nccl_version_string(NCCL_VERSION(2, 8, 4)) == "2.8.4");
  CHECK(gpu::nccl_version_string(NCCL_VERSION(2, 30, 7)) == "2.30.7");
}
#endif

TEST_CASE("an NCCL that loads here answers through the loader's entry points", "[multi_gpu]") {
  std::string why;
  const gpu::Nccl *nccl = gpu::Nccl::find(why);
  if (nccl == nullptr) {
    WARN(why << "; the loaded-library checks skipped");
    return;
  }
  const std::string version = nccl->version();
  INFO(version << " from " << nccl->path());
  CHECK(version.rfind("2.", 0) == 0);
  CHECK(std::count(version.begin(), version.end(), '.') == 2);
  // A call NCCL refuses inside the group: its own error string, thrown
  // after the group is closed (so the next group starts clean).
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      nccl->all_reduce({nullptr}, {nullptr}, {nullptr}, 1, gpu::Nccl::Op::sum);
      FAIL("ncclAllReduce on no communicator succeeded");
    } catch (const std::runtime_error &e) {
      CHECK(std::string(e.what()).rfind("ncclAllReduce: invalid argument", 0) == 0);
    }
  }
}

TEST_CASE("the registry's fused-vocab-parallel is made for the run's GPUs", "[multi_gpu]") {
  const RegisteredImplementation *r = find_implementation(kVocabParallelName);
  REQUIRE(r != nullptr);
  CHECK(r->needs_gpu);
  REQUIRE(r->make_for_gpus);
  const auto four = r->make_for_gpus(4);
  CHECK(four->name() == "fused-vocab-parallel");
  CHECK(four->revision().title.find("over 4 GPUs") != std::string::npos);
  CHECK(r->make()->revision().title.find("over 1 GPU through") != std::string::npos);
  CHECK_THROWS_AS(make_vocab_parallel({.gpus = 0}), std::invalid_argument);
  // Only it and its compute-only twin span GPUs.
  int spanning = 0;
  for (const auto &entry : implementation_registry()) spanning += entry.make_for_gpus ? 1 : 0;
  CHECK(spanning == 2);
  const RegisteredImplementation *compute_only = find_implementation(kVocabParallelComputeOnlyName);
  REQUIRE(compute_only != nullptr);
  REQUIRE(compute_only->make_for_gpus);
  const auto no_collectives = compute_only->make_for_gpus(8);
  CHECK_FALSE(no_collectives->computes_loss());
  CHECK(four->computes_loss());
  CHECK(no_collectives->revision().description.find("Compute only") != std::string::npos);
  if (!gpu::gpu_available()) {
    const Workload w = load_workload(kibench::test::source_dir() /
                                     "workloads/small/small-v1000-h64-t32.json");
    const auto why = four->unsupported(w);
    REQUIRE(why.has_value());
    CHECK(why->find("no GPU") != std::string::npos);
  }
}

TEST_CASE("a multi-GPU sample is its slowest device's", "[multi_gpu]") {
  CHECK(gpu::slowest_device_ns({3.0, 7.5, 7.0}) == 7.5);
  CHECK(gpu::slowest_device_ns({2.0}) == 2.0);
  CHECK_THROWS_AS(gpu::slowest_device_ns({}), std::invalid_argument);
}
