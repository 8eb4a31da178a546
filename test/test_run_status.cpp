// A BenchmarkRun's status as a value: exactly the strings the KernelIndex
// schema allows, each read back as written, and which of them count as a
// failed check.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/json/parse.hpp"
#include "lib/json/path.hpp"
#include "lib/manifest/run_status.hpp"
#include "test/source_tree.hpp"

using namespace kibench;

namespace {

// spec.status's enum in the benchmark-run schema, in its order.
std::vector<std::string> schema_statuses() {
  const json::Value schema = json::parse_file(kibench::test::test_data_dir() / "kernelindex" / "schemas" /
                                              "benchmark-run.v1alpha1.schema.json");
  const json::Value *values = json::member_at(schema, "properties.spec.properties.status.enum");
  REQUIRE(values != nullptr);
  std::vector<std::string> out;
  for (const json::Value &v : values->as_array()) out.push_back(v.as_string());
  return out;
}

} // namespace

TEST_CASE("every status the schema allows reads back as written, and only those", "[run][status]") {
  const auto statuses = schema_statuses();
  REQUIRE(statuses.size() == 13);
  std::string listed;
  for (const std::string &text : statuses) {
    INFO(text);
    const auto status = run_status_from_string(text);
    REQUIRE(status);
    CHECK(to_string(*status) == text);
    listed += (listed.empty() ? "" : ", ") + text;
  }
  CHECK(run_status_names() == listed);
  for (const char *text : {"", "Passed", "passed ", "failed", "unknown", "incorrect-numerical"}) {
    INFO(text);
    CHECK_FALSE(run_status_from_string(text));
  }
}

TEST_CASE("a failed check: every status but passed and incomplete_evidence", "[run][status]") {
  CHECK_FALSE(is_failure(RunStatus::passed));
  CHECK_FALSE(is_failure(RunStatus::incomplete_evidence));
  std::size_t failures = 0;
  for (const std::string &text : schema_statuses())
    failures += is_failure(*run_status_from_string(text)) ? 1 : 0;
  CHECK(failures == 11);
  CHECK(is_failure(RunStatus::incorrect_numerical));
  CHECK(is_failure(RunStatus::revoked));
}
