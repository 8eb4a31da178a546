// kibench export: the tidy CSV read back (here, and by Python's csv module
// as pandas would), Liger's CSV read back by `kibench import liger` in both
// directions, and the KernelIndex submission bundle checked as KernelIndex's
// validator reads it (schemas, digest references, project slugs, one YAML
// document whose scalars mean the same to every reader).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lib/compare/run_loader.hpp"
#include "lib/export/csv_writer.hpp"
#include "lib/export/exported_run.hpp"
#include "lib/export/submission_bundle.hpp"
#include "lib/export/yaml_writer.hpp"
#include "lib/importers/csv_table.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "test/cli_process.hpp"
#include "test/test_compare_support.hpp"
#include "test/source_tree.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using kibench::json::Object;
using kibench::json::string_at;
using kibench::json::Value;
using namespace kibench::test;

namespace {

const fs::path kSource = kibench::test::source_dir();
// Two H200 run directories shipped as evidence: implementations that passed,
// floors marked incomplete_evidence, and a run with the sustained phase.
fs::path h200_final() { return kibench::test::evidence_set("h200-2026-12-04") / "final"; }

std::string python(const std::string &script, const std::string &arguments) {
  return "/usr/bin/python3 " + quoted(kSource / "test/export" / script) + " " + arguments;
}

std::string check_submission(const fs::path &bundle, const std::vector<fs::path> &run_dirs = {}) {
  std::string command =
      python("check_submission.py", quoted(kSource / "test/data/kernelindex/schemas") + " " + quoted(bundle));
  for (const auto &dir : run_dirs) command += " " + quoted(dir);
  return command;
}

// Rows of a CSV by column name.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string &text) {
  const auto records = kibench::importers::read_csv(text);
  REQUIRE(!records.empty());
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    REQUIRE(!records[r].problem);
    REQUIRE(records[r].fields.size() == records[0].fields.size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < records[0].fields.size(); ++i)
      row[records[0].fields[i]] = records[r].fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

double number(const std::string &text) {
  REQUIRE(!text.empty());
  return std::stod(text);
}

std::vector<fs::path> subdirectories(const fs::path &parent) {
  std::vector<fs::path> out;
  for (const auto &entry : fs::directory_iterator(parent)) {
    if (entry.is_directory()) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<double> latency_measurement(const Value &run, std::string_view statistic) {
  for (const Value &m : kibench::json::member_at(run, "spec.measurements")->as_array()) {
    if (string_at(m, "metric") == "latency" && string_at(m, "statistic") == statistic)
      return m.find("value")->as_number();
  }
  return std::nullopt;
}

} // namespace

TEST_CASE("RFC 4180 fields and YAML scalars are written so they read back", "[export]") {
  using kibench::exports::csv_field;
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(kibench::exports::csv_record({"a", "b,c", ""}) == "a,\"b,c\",\r\n");

  using kibench::exports::yaml_number;
  CHECK(yaml_number(4096) == "4096");
  CHECK(yaml_number(-100) == "-100");
  CHECK(yaml_number(0.5) == "0.5");
  CHECK(yaml_number(1e-7) == "1.0e-7");
  CHECK(yaml_number(1.5e300) == "1.5e+300");

  SECTION("strings YAML would resolve to numbers, booleans or null stay strings for PyYAML (1.1)") {
    const Object tricky{{"octal", "079035"},
                        {"hex_digest", "296e61495673"},
                        {"yes", "yes"},
                        {"null", "null"},
                        {"exp", "1e3"},
                        {"tilde", "~"},
                        {"on", "On"},
                        {"break", "line\nbreak\t\"q\"\\"},
                        {"separator", "a\u2028b\u0085c"},
                        {"0x1", 1},
                        {"tiny", 1e-7},
                        {"smallest", 5e-324},
                        {"huge", 1e21},
                        {"big", 9007199254740991.0},
                        {"nested", Object{{"list", kibench::json::Array{"1", 2, true, nullptr, Object{}}}}},
                        {"empty", kibench::json::Array{}}};
    TempDir tmp;
    const fs::path file = tmp.path() / "tricky.yaml";
    std::ofstream(file) << kibench::exports::yaml_block(Value(tricky));
    const auto loaded = run_command("/usr/bin/python3 -c 'import json,sys,yaml; "
                                    "print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' " +
                                    quoted(file));
    INFO(loaded.err << read_text(file));
    REQUIRE(loaded.exit_code == 0);
    CHECK(kibench::json::parse(loaded.out, "python") == Value(tricky));
  }
}

TEST_CASE("export --format csv: one tidy row per run, every value as the run records it", "[export][csv]") {
  TempDir tmp;
  const fs::path csv = tmp.path() / "runs.csv";
  const auto exported = run_kibench("export " + quoted(h200_final() / "full-a") + " " + quoted(h200_final() / "sustained") +
                                    " --out " + quoted(csv));
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK_THAT(exported.out, Contains("written: "));

  const auto runs = kibench::exports::load_exported_runs({h200_final() / "full-a", h200_final() / "sustained"});
  const auto rows = csv_rows(read_text(csv));
  REQUIRE(rows.size() == runs.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto &row = rows[i];
    const auto &run = runs[i];
    INFO(run.compared.id);
    CHECK(row.at("run_digest") == run.compared.digest);
    CHECK(row.at("implementation") == run.compared.implementation);
    CHECK(row.at("status") == std::string(kibench::to_string(run.compared.status)));
    CHECK(row.at("tokens") == "8192");
    CHECK(row.at("vocab") == "128256");
    CHECK(row.at("hidden") == "4096");
    CHECK(row.at("student_hidden") == "2048");
    CHECK(row.at("dtype") == "bf16");
    CHECK(row.at("beta") == "0.5");
    CHECK(row.at("hardware_product") == "NVIDIA H200");
    CHECK(row.at("driver") == string_at(run.environment, "spec.software.driver"));
    CHECK(row.at("protocol_name") == string_at(run.protocol, "metadata.name"));
    CHECK(row.at("comparison_key") == run.compared.comparison_key);
    CHECK(row.at("observed_at") == string_at(run.run, "spec.observedAt"));
    const Value *median = kibench::json::member_at(run.run, "spec.timing.latencyNs.median");
    REQUIRE(median != nullptr);
    CHECK(number(row.at("median_ns")) == median->as_number());
    CHECK(number(row.at("p20_ns")) == *latency_measurement(run.run, "p20"));
    CHECK(number(row.at("samples")) == static_cast<double>(run.compared.raw->samples.size()));
  }
  // The sustained phase's figures, where it ran.
  const auto sustained = std::find_if(rows.begin(), rows.end(), [](const auto &row) {
    return row.at("implementation") == "fused" && !row.at("energy_joules").empty();
  });
  REQUIRE(sustained != rows.end());
  CHECK(number(sustained->at("power_watts")) > 0);
  CHECK(number(sustained->at("sustained_latency_ns")) > 0);

  SECTION("Python's csv module loads it; every numeric column parses as numbers (as pandas infers them)") {
    const auto checked =
        run_command(python("check_tidy_csv.py", quoted(csv) + " " + std::to_string(rows.size())));
    INFO(checked.out);
    CHECK(checked.exit_code == 0);
  }
  SECTION("the check is not vacuous: a word in a numeric column fails it") {
    std::string text = read_text(csv);
    const std::size_t at = text.find(",8192,");
    REQUIRE(at != std::string::npos);
    text.replace(at, 6, ",many,");
    std::ofstream(csv, std::ios::binary | std::ios::trunc) << text;
    CHECK(
        run_command(python("check_tidy_csv.py", quoted(csv) + " " + std::to_string(rows.size()))).exit_code ==
        1);
  }
}

TEST_CASE("export --format csv quotes what needs quoting, and to stdout without --out", "[export][csv]") {
  TempDir tmp;
  const std::string awkward = "fused,\"v2\"";
  kibench::test::write_run_directory(
      tmp.path() / "run", FixtureCase::standard(),
      {FixtureRun(awkward, quiet_samples(1000, 1)), FixtureRun("cpu-reference", quiet_samples(1200, 2))});
  const auto exported = run_kibench("export " + quoted(tmp.path() / "run"));
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK_THAT(exported.out, Contains("\"fused,\"\"v2\"\"\""));
  const auto rows = csv_rows(exported.out);
  REQUIRE(rows.size() == 2);
  const auto named = std::find_if(rows.begin(), rows.end(),
                                  [&](const auto &row) { return row.at("implementation") == awkward; });
  REQUIRE(named != rows.end());
  CHECK(named->at("hardware_product") == "Test CPU");
  const fs::path csv = tmp.path() / "out.csv";
  std::ofstream(csv, std::ios::binary) << exported.out;
  const auto checked = run_command(python("check_tidy_csv.py", quoted(csv) + " 2"));
  INFO(checked.out);
  CHECK(checked.exit_code == 0);
}

TEST_CASE("export --format liger-csv: kibench import liger reads back what was exported", "[export][liger]") {
  TempDir tmp;
  FixtureCase c = FixtureCase::standard();
  c.workload = kibench::json::parse_file(kSource / "workloads/seed-distill-jsd-h4096-t8192-v128256.json");
  c.environment =
      *kibench::json::parse_file(kSource / "workloads/kernelindex/liger/environments-by-gpu-name.json")
           .find("NVIDIA H100 80GB HBM3");
  kibench::test::write_run_directory(
      tmp.path() / "run", c,
      {FixtureRun("torch", quiet_samples(213.16e6, 1)), FixtureRun("liger", quiet_samples(120.5e6, 2)),
       FixtureRun("fused", quiet_samples(33.0e6, 3)),
       FixtureRun("wrong", quiet_samples(20e6, 4)).with_status("incorrect_numerical")});
  const fs::path csv = tmp.path() / "all_benchmark_data.csv";
  const auto exported =
      run_kibench("export " + quoted(tmp.path() / "run") + " --format liger-csv --out " + quoted(csv));
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK_THAT(exported.err, Contains("wrong: not exported: status incorrect_numerical"));
  const auto rows = csv_rows(read_text(csv));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].at("kernel_name") == "distill_jsd_loss");
  CHECK(rows[0].at("kernel_operation_mode") ==
        "full"); // from the protocol's notes: the runs carry no pass label
  CHECK(rows[0].at("gpu_name") == "NVIDIA H100 80GB HBM3");
  CHECK(rows[0].at("timestamp") == "2026-01-02 03:04:05");

  const fs::path imported = tmp.path() / "imported";
  const auto import = run_kibench("import liger " + quoted(csv) + " --out " + quoted(imported) + " --json");
  INFO(import.out << import.err);
  REQUIRE(import.exit_code == 0);
  // The format has no place for kibench's own implementations: fused is
  // a provider Liger's curated tables do not know.
  CHECK_THAT(import.err, Contains("unknown provider"));

  const auto original = kibench::exports::load_exported_runs({tmp.path() / "run"});
  const auto back = kibench::exports::load_exported_runs(subdirectories(imported));
  REQUIRE(back.size() == 2);
  for (const auto &record : back) {
    const std::string provider = string_at(record.run, "spec.sourceNative.externalId")
                                     .substr(std::string("distill_jsd_loss/full/").size());
    const auto from = std::find_if(original.begin(), original.end(), [&](const auto &r) {
      return provider.starts_with(r.compared.implementation + "/");
    });
    REQUIRE(from != original.end());
    INFO(from->compared.id);
    CHECK(
        *kibench::compare::latency_ns(
            *kibench::json::member_at(record.run, "spec.timing.latencyNs.median")) ==
        *kibench::compare::latency_ns(*kibench::json::member_at(from->run, "spec.timing.latencyNs.median")));
    CHECK(latency_measurement(record.run, "p20") == latency_measurement(from->run, "p20"));
    CHECK(latency_measurement(record.run, "p80") == latency_measurement(from->run, "p80"));
    CHECK(string_at(record.run, "spec.observedAt") ==
          "2026-01-02T03:04:05.000Z"); // whole seconds in Liger's CSV
    CHECK(string_at(record.run, "spec.sourceNative.benchmark") == "distill_jsd_loss/full");
    CHECK(record.compared.environment_digest == from->compared.environment_digest);
    CHECK(record.compared.operation_digest == from->compared.operation_digest);
    CHECK(*kibench::json::member_at(record.workload, "spec.axes") ==
          *kibench::json::member_at(from->workload, "spec.axes"));
  }

  SECTION("and the other way: Liger's own rows, imported and exported again, are the rows they were") {
    const fs::path liger_out = tmp.path() / "liger";
    const auto rows_in =
        run_kibench("import liger " + quoted(kSource / "test/data/liger/jsd-family-rows.csv") + " --out " +
                    quoted(liger_out));
    REQUIRE(rows_in.exit_code == 0);
    const fs::path again = tmp.path() / "again.csv";
    const auto re_export =
        run_kibench("export " + quoted(liger_out) + " --format liger-csv --out " + quoted(again));
    INFO(re_export.err);
    REQUIRE(re_export.exit_code == 0);
    // jsd rows that swept the vocabulary come back as token rows (x_name BT,
    // vocab_size in the config): compared here are the kernels that sweep
    // tokens, keyed by what identifies a row.
    const auto key_of = [](const std::map<std::string, std::string> &row) {
      const Value config = kibench::json::parse(row.at("extra_benchmark_config_str"), "config");
      return row.at("kernel_name") + "/" + row.at("kernel_operation_mode") + "/" + row.at("kernel_provider") +
             "/" + row.at("x_value") + "/" + row.at("gpu_name") + "/" + row.at("timestamp") + "/" +
             kibench::json::canonical(*config.find("H")) + "/" + kibench::json::canonical(*config.find("V"));
    };
    std::map<std::string, std::map<std::string, std::string>> upstream;
    for (const auto &row : csv_rows(read_text(kSource / "test/data/liger/jsd-family-rows.csv"))) {
      if (row.at("metric_name") == "speed" && row.at("kernel_name") != "jsd") upstream[key_of(row)] = row;
    }
    const auto exported_rows = csv_rows(read_text(again));
    REQUIRE(exported_rows.size() > 10);
    std::size_t compared = 0;
    for (const auto &row : exported_rows) {
      if (row.at("kernel_name") == "jsd") continue;
      ++compared;
      const auto found = upstream.find(key_of(row));
      REQUIRE(found != upstream.end());
      const auto &was = found->second;
      CHECK(row.at("liger_version") == was.at("liger_version"));
      // Within the import's rounding to whole nanoseconds.
      CHECK(std::fabs(number(row.at("y_value_50")) - number(was.at("y_value_50"))) <= 0.5e-6);
      const Value config = kibench::json::parse(row.at("extra_benchmark_config_str"), "exported");
      const Value config_was = kibench::json::parse(was.at("extra_benchmark_config_str"), "upstream");
      for (const char *key : {"H", "V", "dtype", "bias", "weight_hard_loss", "weight_soft_loss"}) {
        if (config_was.find(key) != nullptr) CHECK(config.find(key) != nullptr);
        if (config_was.find(key) != nullptr && config.find(key) != nullptr)
          CHECK(*config.find(key) == *config_was.find(key));
      }
    }
    CHECK(compared == upstream.size());
  }
}

TEST_CASE("export --format kernelindex-submission: a CPU run as one bundle KernelIndex's rules accept",
          "[export][submission]") {
  TempDir tmp;
  const auto run = run_kibench("run " + quoted(kSource / "workloads/small/small-v1000-h64-t32.json") +
                               " --impl cpu-reference,cpu-fp64 --out " + quoted(tmp.path() / "runs") +
                               " --min-samples 10 --max-samples 20 --min-time 0 --warmup 1");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto dirs = subdirectories(tmp.path() / "runs");
  REQUIRE(dirs.size() == 1);
  const fs::path bundle = tmp.path() / "bundle.yaml";
  const auto exported = run_kibench("export " + quoted(dirs.front()) +
                                    " --format kernelindex-submission --out " + quoted(bundle));
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  // kibench's built-ins declare its licence: no note on stderr, the
  // licence in the header.
  CHECK_THAT(exported.err, !Contains("licence"));
  const std::string text = read_text(bundle);
  CHECK_THAT(text, Contains("#   kibench-cpu-reference: Apache-2.0\n"));
  CHECK_THAT(text, Contains("#   kibench-cpu-fp64: Apache-2.0\n"));
  CHECK_THAT(text, !Contains("none declared"));
  CHECK_THAT(text, Contains("#   cpu-fp64: samples.cpu-fp64.json sha256:"));

  SECTION("schemas, digest references, project slugs, YAML scalars, every manifest unchanged") {
    const auto checked = run_command(check_submission(bundle, {dirs.front()}));
    INFO(checked.out);
    CHECK(checked.exit_code == 0);
    CHECK_THAT(checked.out, Contains("2 runs, 2 implementations, 1 workloads, 1 operations, 1 projects"));
  }
  SECTION("yamllint reads it") {
    const auto linted =
        run_command("yamllint -d '{extends: default, rules: {line-length: disable}}' " + quoted(bundle));
    INFO(linted.out);
    CHECK(linted.exit_code == 0);
  }
  SECTION("the check is not vacuous: a reference that resolves nowhere fails it") {
    std::string broken = text;
    const std::size_t at = broken.find("workloadDigest: \"sha256:");
    REQUIRE(at != std::string::npos);
    char &digit = broken[at + std::string("workloadDigest: \"sha256:").size()];
    digit = digit == 'a' ? 'b' : 'a';
    std::ofstream(bundle, std::ios::binary | std::ios::trunc) << broken;
    const auto checked = run_command(check_submission(bundle));
    CHECK(checked.exit_code == 1);
    CHECK_THAT(checked.out, Contains("is no WorkloadCase of the bundle"));
  }
  SECTION("nor for quoting: a digit string left plain fails it") {
    std::string plain = text;
    const std::size_t at = plain.find("\"0.1.0\"");
    REQUIRE(at != std::string::npos);
    plain.replace(at, 7, "079035");
    std::ofstream(bundle, std::ios::binary | std::ios::trunc) << plain;
    const auto checked = run_command(check_submission(bundle));
    CHECK(checked.exit_code == 1);
    CHECK_THAT(checked.out, Contains("079035"));
  }
}

TEST_CASE("export --format kernelindex-submission of imported Liger records: their curated projects and "
          "operations, every reference resolved",
          "[export][submission]") {
  TempDir tmp;
  const fs::path records = tmp.path() / "liger";
  REQUIRE(run_kibench("import liger " + quoted(kSource / "test/data/liger/jsd-family-rows.csv") + " --out " +
                      quoted(records))
              .exit_code == 0);
  const fs::path bundle = tmp.path() / "liger.yaml";
  const auto exported =
      run_kibench("export " + quoted(records) + " --format kernelindex-submission --out " + quoted(bundle));
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  const auto checked = run_command(check_submission(bundle, subdirectories(records)));
  INFO(checked.out);
  CHECK(checked.exit_code == 0);
  // Each record's project.json (liger, torch) and the three JSD-family operations.
  CHECK_THAT(checked.out, Contains("3 operations, 2 projects; 0 problems"));
}

TEST_CASE("export refuses what it cannot write, and writes nothing", "[export]") {
  TempDir tmp;
  kibench::test::write_run_directory(
      tmp.path() / "run", FixtureCase::standard(),
      {FixtureRun("wrong", quiet_samples(1000, 1)).with_status("incorrect_numerical")});
  const fs::path out = tmp.path() / "out.csv";
  const auto nothing =
      run_kibench("export " + quoted(tmp.path() / "run") + " --format liger-csv --out " + quoted(out));
  CHECK(nothing.exit_code == 2);
  CHECK_THAT(nothing.err, Contains("no run can be a row of Liger's CSV"));
  CHECK(!fs::exists(out));

  const auto missing = run_kibench("export " + quoted(tmp.path() / "run") + " --out " +
                                   quoted(tmp.path() / "no-such-folder" / "x.csv"));
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Contains("--out"));
  CHECK(run_kibench("export " + quoted(tmp.path() / "run") + " --format xlsx").exit_code == 2);
  CHECK(run_kibench("export " + quoted(tmp.path() / "nothing-here")).exit_code == 2);

  SECTION("a bundle larger than KernelIndex accepts") {
    std::vector<FixtureRun> many;
    for (int i = 0; i < 90; ++i)
      many.emplace_back("impl-" + std::to_string(i), quiet_samples(1000, i + 1, 10));
    kibench::test::write_run_directory(tmp.path() / "many", FixtureCase::standard(), many);
    const fs::path bundle = tmp.path() / "many.yaml";
    const auto big = run_kibench("export " + quoted(tmp.path() / "many") +
                                 " --format kernelindex-submission --out " + quoted(bundle));
    CHECK(big.exit_code == 2);
    CHECK_THAT(big.err, Contains("at most 262144 bytes"));
    CHECK(!fs::exists(bundle));
  }
}
