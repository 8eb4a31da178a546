// Shared by the digest tests: a scratch directory and the Liger seed row's
// canonical manifests laid out as a run directory.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

#include "lib/digest/digest.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "test/source_tree.hpp"

namespace kibench::test {

// A fresh directory under the system temp folder, removed with its contents.
class ScratchDirectory {
public:
  explicit ScratchDirectory(std::string_view purpose) {
    static std::atomic<unsigned> counter{0};
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            (std::string("kibench-") + std::string(purpose) + "-" + std::to_string(entropy()) + "-" +
             std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;

  [[nodiscard]] const std::filesystem::path &path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

inline void write_text(const std::filesystem::path &path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_text(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline const std::filesystem::path &liger_seed_row_file() {
  static const std::filesystem::path file =
      kibench::test::test_data_dir() / "liger" / "seed-row-canonical-manifests.json";
  return file;
}

inline constexpr std::string_view kSeedRowComparisonKey =
    "sha256:8211ca496bad5543154be868e1b5b003b7bc18e15a029924f3340435be62ea72";

// Writes the seed row as a run directory: operation.json, workload.json,
// implementation.torch.json, protocol.json, environment.json, and
// run.torch.json whose timing.rawSamples names samples.torch.json (a JSON
// file that is not a manifest) by its sha256.
inline void write_seed_row_run_directory(const std::filesystem::path &directory) {
  const json::Value bodies = json::parse_file(liger_seed_row_file());
  const auto write_manifest = [&](std::string_view kind, std::string_view file) {
    write_text(directory / file, json::pretty(*bodies.find(kind)) + "\n");
  };
  write_manifest("OperationSpec", "operation.json");
  write_manifest("WorkloadCase", "workload.json");
  write_manifest("ImplementationRevision", "implementation.torch.json");
  write_manifest("BenchmarkProtocol", "protocol.json");
  write_manifest("ExecutionEnvironment", "environment.json");

  const std::string samples = R"({"unit": "ns", "samples": [213159866, 213160001, 213158990]})"
                              "\n";
  write_text(directory / "samples.torch.json", samples);
  json::Value run = *bodies.find("BenchmarkRun");
  json::Object &timing = run.as_object().find("spec")->as_object().find("timing")->as_object();
  timing.set("rawSamples", json::Object{{"uri", "samples.torch.json"}, {"digest", sha256_digest(samples)}});
  run.as_object().set("metadata", json::Object{{"name", "seed-row-torch"}});
  write_text(directory / "run.torch.json", json::pretty(run) + "\n");
}

} // namespace kibench::test
