// End-to-end: `kibench run` on a CPU-sized workload writes a complete,
// schema-valid, digest-consistent run directory; tampering is detected.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "test/cli_process.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using namespace kibench::test;

namespace {

const fs::path kSource = kibench::test::source_dir();
const fs::path kSmall = kSource / "workloads/small/small-v1000-h64-t32.json";

// Quick sampling so the suite stays fast; the protocol records these values.
const std::string kQuick = "--min-samples 10 --max-samples 40 --min-time 0 --warmup 1";

fs::path only_run_dir(const fs::path &out) {
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(out)) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 1);
  return dirs.front();
}

std::string validate_command(const fs::path &target) {
  return "/usr/bin/python3 " + quoted(kSource / "test/schema/validate.py") + " " +
         quoted(kSource / "test/data/kernelindex/schemas") + " " + quoted(target);
}

// Changes one digit inside the "spec" part of a manifest (or, for a run, one
// hex digit of a referenced digest) so the JSON stays valid.
void change_one_byte(const fs::path &file) {
  std::string text = read_text(file);
  std::size_t at = text.find("\"protocolDigest\"");
  if (at != std::string::npos) {
    at = text.find("sha256:", at) + 7;
  } else if (file.filename().string().rfind("samples.", 0) == 0) {
    at = text.find("\"ns\"");
    at = text.find_first_of("123456789", at);
  } else {
    at = text.find("\"spec\"");
    REQUIRE(at != std::string::npos);
    at = text.find_first_of("0123456789", text.find(':', at));
  }
  REQUIRE(at != std::string::npos);
  text[at] = text[at] == '1' ? '2' : '1';
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

} // namespace

TEST_CASE("kibench run writes a complete run directory that validates and verifies", "[cli][run]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  const auto run = run_kibench("run " + quoted(kSmall) + " --impl cpu-reference,cpu-fp64 --out " +
                               quoted(out) + " " + kQuick);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("cpu-reference") != std::string::npos);
  CHECK(run.out.find("median ms") != std::string::npos);
  const fs::path dir = only_run_dir(out);
  for (const char *name : {"operation.json", "workload.json", "protocol.json", "environment.json",
                           "run.cpu-reference.json", "run.cpu-fp64.json", "samples.cpu-reference.json",
                           "implementation.cpu-reference.json", "summary.json"})
    CHECK(fs::exists(dir / name));
  // No staging leftovers beside the run directory.
  for (const auto &e : fs::directory_iterator(out))
    CHECK(e.path().filename().string().find(".partial") == std::string::npos);

  SECTION("every manifest validates against the KernelIndex schemas") {
    const auto v = run_command(validate_command(dir));
    INFO(v.out);
    CHECK(v.exit_code == 0);
  }
  SECTION("the schema check is not vacuous: an unknown field fails it") {
    std::string text = read_text(dir / "protocol.json");
    text.insert(text.find("\"spec\": {") + 9, "\"unknownField\": 1,");
    std::ofstream(dir / "protocol.json", std::ios::trunc) << text;
    CHECK(run_command(validate_command(dir)).exit_code == 1);
  }
  SECTION("digest --verify passes and prints the comparison key") {
    const auto v = run_kibench("digest --verify " + quoted(dir));
    INFO(v.out << v.err);
    CHECK(v.exit_code == 0);
    CHECK(v.out.find("comparison key") != std::string::npos);
  }
  SECTION("a one-byte change in any manifest or raw samples file fails --verify") {
    for (const char *name :
         {"workload.json", "protocol.json", "environment.json", "operation.json",
          "implementation.cpu-reference.json", "run.cpu-reference.json", "samples.cpu-reference.json"}) {
      TempDir copy;
      fs::copy(dir, copy.path() / "run", fs::copy_options::recursive);
      change_one_byte(copy.path() / "run" / name);
      const auto v = run_kibench("digest --verify " + quoted(copy.path() / "run"));
      INFO(name << ": " << v.out << v.err);
      CHECK(v.exit_code == 1);
    }
  }
}

TEST_CASE("kibench run refuses bad requests with exit 2 and writes nothing", "[cli][run]") {
  TempDir tmp;
  const fs::path out = tmp.path() / "runs";
  SECTION("unknown implementation") {
    const auto r = run_kibench("run " + quoted(kSmall) + " --impl no-such-impl --out " + quoted(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no-such-impl") != std::string::npos);
    CHECK(r.err.find("did you mean") == std::string::npos);
    CHECK(r.err.find("py:MODULE:CALLABLE") != std::string::npos);
  }
  SECTION("a mistyped implementation gets the nearest name") {
    const auto r = run_kibench("run " + quoted(kSmall) + " --impl cpu-refrence --out " + quoted(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown implementation \"cpu-refrence\"; did you mean \"cpu-reference\"?") !=
          std::string::npos);
  }
  SECTION("missing workload file") {
    const auto r = run_kibench("run " + quoted(tmp.path() / "absent.json") + " --out " + quoted(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("absent.json") != std::string::npos);
  }
  SECTION("bad pass") {
    const auto r = run_kibench("run " + quoted(kSmall) + " --pass sideways --out " + quoted(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--pass") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("without a GPU, kibench run says once why GPU implementations were skipped", "[cli][run]") {
  const auto list = run_kibench("list");
  REQUIRE(list.exit_code == 0);
  if (list.out.find("no GPU") == std::string::npos) {
    WARN("a GPU is present: the no-GPU behaviour is not exercised here");
    return;
  }
  TempDir tmp;
  const auto r = run_kibench("run " + quoted(kSmall) + " --out " + quoted(tmp.path()) + " " + kQuick);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  const std::string needle = "GPU implementations skipped";
  const auto first = r.err.find(needle);
  REQUIRE(first != std::string::npos);
  CHECK(r.err.find(needle, first + 1) == std::string::npos);

  SECTION("a case too big for the CPU is refused with what to do") {
    TempDir out;
    const auto big =
        run_kibench("run " + quoted(kSource / "workloads/seed-distill-jsd-h4096-t8192-v128256.json") +
                    " --out " + quoted(out.path() / "runs"));
    CHECK(big.exit_code == 2);
    CHECK(big.err.find("GPU") != std::string::npos);
    CHECK_FALSE(fs::exists(out.path() / "runs"));
  }
}

TEST_CASE("kibench run --save-tensors writes .npy files and an index", "[cli][run]") {
  TempDir tmp;
  const auto r =
      run_kibench("run " + quoted(kSmall) + " --impl cpu-reference --out " + quoted(tmp.path() / "runs") +
                  " --save-tensors " + quoted(tmp.path() / "tensors") + " " + kQuick);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path dir = only_run_dir(tmp.path() / "tensors");
  const std::string index = read_text(dir / "index.json");
  for (const char *file :
       {"input.student_input.bf16.npy", "input.target.int64.npy", "cpu-fp64.loss.fp64.npy",
        "cpu-reference.grad_student_weight.bf16.npy", "cpu-fp64.grad_student_weight.fp64.npy"}) {
    INFO(file);
    CHECK(index.find(file) != std::string::npos);
    REQUIRE(fs::exists(dir / file));
  }
  // student_input [32, 32] bf16: a 64-byte-aligned header, then 2 bytes each.
  const std::string npy = read_text(dir / "input.student_input.bf16.npy");
  REQUIRE(npy.compare(0, 6, "\x93NUMPY") == 0);
  const std::size_t header = static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  CHECK((10 + header) % 64 == 0);
  CHECK(npy.find("'shape': (32, 32)") != std::string::npos);
  CHECK(npy.size() == 10 + header + 32 * 32 * 2);
  const std::string target = read_text(dir / "input.target.int64.npy");
  CHECK(target.find("'shape': (32,)") != std::string::npos);
}

TEST_CASE("kibench list marks the diagnostic lanes, and only them", "[cli][list]") {
  const auto list = run_kibench("list");
  REQUIRE(list.exit_code == 0);
  std::size_t marked = 0;
  for (std::size_t at = 0, end = 0; at < list.out.size(); at = end + 1) {
    end = list.out.find('\n', at);
    if (end == std::string::npos) end = list.out.size();
    const std::string line = list.out.substr(at, end - at);
    const bool diagnostic = line.find("[diagnostic]") != std::string::npos;
    const bool emulated_or_partial =
        line.find("-emulated ") != std::string::npos || line.find("-compute-only ") != std::string::npos;
    INFO(line);
    CHECK(diagnostic == emulated_or_partial);
    marked += diagnostic ? 1 : 0;
  }
  CHECK(marked == 4); // fused-vp{2,4,8}-emulated, fused-vocab-parallel-compute-only
}
