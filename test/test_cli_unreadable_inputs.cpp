// Nothing kibench reads can hang it or exhaust its memory: only regular
// files are opened (a FIFO would block, /dev/zero never ends), each kind of
// file has a size cap (docs/guide.md), and a run's raw-samples URI resolves
// only inside its directory. Each is exit 2 (or a verification failure,
// exit 1) with the file and the reason, within seconds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "lib/digest/digest.hpp"
#include "test/cli_fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace kibench::test;

namespace {

// Every reproduction below used to hang or run out of memory; the limit
// turns that into a failed test.
constexpr int kSeconds = 30;

fs::path make_fifo(const fs::path &path) {
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

// Points the run's spec.timing.rawSamples.uri at `uri`.
void point_samples_at(const fs::path &run_dir, const std::string &uri) {
  const fs::path run = run_dir / "run.cpu-reference.json";
  std::string text = read_text(run);
  const std::string from = "\"uri\": \"samples.cpu-reference.json\"";
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), "\"uri\": \"" + uri + "\"");
  std::ofstream(run, std::ios::binary | std::ios::trunc) << text;
}

} // namespace

TEST_CASE("a FIFO is refused at once as a workload, a public key or a secret key", "[cli][unreadable]") {
  TempDir tmp;
  const fs::path fifo = make_fifo(tmp.path() / "fifo.json");
  const fs::path key_fifo = make_fifo(tmp.path() / "fifo.key");
  const fs::path run_dir = quick_run(tmp.path() / "runs");

  const auto workload = run_kibench_within(kSeconds, "run " + quoted(fifo) + " --impl cpu-reference --out " +
                                                         quoted(tmp.path() / "out"));
  CHECK(workload.exit_code == 2);
  CHECK_THAT(workload.err, Contains(fifo.string() + ": cannot read: a FIFO, not a regular file"));
  CHECK_FALSE(fs::exists(tmp.path() / "out"));

  const auto pub = run_kibench_within(kSeconds, "verify " + quoted(run_dir) + " --pub " + quoted(fifo));
  CHECK(pub.exit_code == 2);
  CHECK_THAT(pub.err, Contains(fifo.string() + ": cannot read: a FIFO, not a regular file"));

  const auto key = run_kibench_within(kSeconds, "attest " + quoted(run_dir) + " --key " + quoted(key_fifo));
  CHECK(key.exit_code == 2);
  CHECK_THAT(key.err, Contains(key_fifo.string() + ": not a regular file"));
  CHECK_FALSE(fs::exists(run_dir / "attestation.dsse.json"));
}

TEST_CASE("a device or an oversized file is refused as a workload before it is read", "[cli][unreadable]") {
  TempDir tmp;
  const auto zero =
      run_kibench_within(kSeconds, "run /dev/zero --impl cpu-reference --out " + quoted(tmp.path() / "out"));
  CHECK(zero.exit_code == 2);
  CHECK_THAT(zero.err, Contains("/dev/zero: cannot read: a character device, not a regular file"));

  // Valid JSON, padded past the 4 MiB a workload may be.
  const fs::path big = tmp.path() / "big.json";
  {
    std::ofstream out(big, std::ios::binary);
    out << read_text(kSmallWorkload) << std::string(4 * 1024 * 1024, ' ');
  }
  const auto oversized = run_kibench_within(kSeconds, "run " + quoted(big) + " --impl cpu-reference --out " +
                                                          quoted(tmp.path() / "out"));
  CHECK(oversized.exit_code == 2);
  CHECK_THAT(oversized.err,
             Contains(big.string() + ": cannot read: ") && Contains("larger than a workload may be (4 MiB)"));
  CHECK_FALSE(fs::exists(tmp.path() / "out"));
}

TEST_CASE("a raw-samples URI is read only inside its run directory", "[cli][unreadable]") {
  TempDir tmp;
  struct Case {
    std::string what;
    std::string uri;
    std::string reason;
  };
  const std::vector<Case> cases{
      {"a device by file URI", "file:///dev/zero", "outside"},
      {"the run directory itself", ".", "names the manifest's directory, not a file"},
      {"another run's file", "../elsewhere/samples.cpu-reference.json", "outside"},
      {"an absolute path", "/etc/hostname", "outside"},
  };
  for (const Case &c : cases) {
    DYNAMIC_SECTION(c.what) {
      const fs::path runs = tmp.path() / "runs";
      const fs::path run_dir = quick_run(runs);
      point_samples_at(run_dir, c.uri);

      const auto compared = run_kibench_within(kSeconds, "compare " + quoted(run_dir));
      INFO(compared.err);
      CHECK(compared.exit_code == 2);
      CHECK_THAT(compared.err, Contains("spec.timing.rawSamples.uri: " + c.uri + ": " + c.reason));

      const auto verified = run_kibench_within(kSeconds, "digest --verify " + quoted(run_dir));
      INFO(verified.out << verified.err);
      CHECK(verified.exit_code == 1);
      CHECK_THAT(verified.out,
                 Contains("FAILED  ") && Contains("spec.timing.rawSamples.uri: " + c.uri + ": " + c.reason));
      fs::remove_all(runs);
    }
  }

  SECTION("a symbolic link inside the directory that leads out of it") {
    const fs::path run_dir = quick_run(tmp.path() / "linked");
    fs::remove(run_dir / "samples.cpu-reference.json");
    fs::create_symlink("/dev/zero", run_dir / "samples.cpu-reference.json");
    const auto compared = run_kibench_within(kSeconds, "compare " + quoted(run_dir));
    CHECK(compared.exit_code == 2);
    CHECK_THAT(compared.err, Contains("samples.cpu-reference.json: outside"));
  }
}

TEST_CASE("compare refuses a duration no run could have taken", "[cli][unreadable]") {
  TempDir tmp;
  SECTION("a raw sample of 1e19 ns") {
    const fs::path run_dir = quick_run(tmp.path() / "runs");
    const fs::path samples = run_dir / "samples.cpu-reference.json";
    std::string text = read_text(samples);
    const std::size_t at = text.find("\"ns\": ");
    REQUIRE(at != std::string::npos);
    text.replace(at + 6, text.find(',', at) - at - 6, "1e19");
    std::ofstream(samples, std::ios::binary | std::ios::trunc) << text;
    // The run's digest of its samples follows, so only the value is wrong.
    const fs::path run = run_dir / "run.cpu-reference.json";
    std::string run_text = read_text(run);
    const std::size_t digest_at = run_text.find("sha256:", run_text.find("\"rawSamples\""));
    run_text.replace(digest_at, 71, kibench::sha256_digest(text));
    std::ofstream(run, std::ios::binary | std::ios::trunc) << run_text;

    const auto compared = run_kibench_within(kSeconds, "compare " + quoted(run_dir));
    INFO(compared.out << compared.err);
    CHECK(compared.exit_code == 2);
    CHECK_THAT(compared.err, Contains("$.samples[0].ns: 1e+19 ns is longer than a sample may be"));
  }
  SECTION("a reported median of 1e19 ns") {
    const fs::path run_dir = quick_run(tmp.path() / "runs");
    const fs::path run = run_dir / "run.cpu-reference.json";
    std::string text = read_text(run);
    const std::size_t at = text.find("\"median\": ", text.find("\"latencyNs\""));
    REQUIRE(at != std::string::npos);
    text.replace(at + 10, text.find_first_of(",\n", at) - at - 10, "1e19");
    std::ofstream(run, std::ios::binary | std::ios::trunc) << text;
    const auto compared = run_kibench_within(kSeconds, "compare " + quoted(run_dir));
    INFO(compared.out << compared.err);
    CHECK(compared.exit_code == 2);
    CHECK_THAT(compared.err,
               Contains("spec.timing.latencyNs.median: 1e+19 ns is longer than a latency may be"));
  }
}
