// RFC 4180 reading as the Liger importer needs it: quoted JSON with doubled
// quotes, CRLF, line numbers of records that span lines, and records that
// break the rules reported rather than thrown.
#include <catch2/catch.hpp>

#include <array>
#include <string_view>

#include "lib/error.hpp"
#include "lib/importers/csv_table.hpp"

using Catch::Matchers::Contains;
using kibench::importers::CsvHeader;
using kibench::importers::read_csv;

TEST_CASE("quoted fields keep commas, doubled quotes and line breaks", "[import][csv]") {
  const auto records = read_csv("a,b,c\r\n"
                                "1,\"{\"\"H\"\": 4096, \"\"bias\"\": false}\",x\r\n"
                                "2,\"two\r\nlines\",y\r\n"
                                "3,,\r\n");
  REQUIRE(records.size() == 4);
  CHECK(records[0].fields == std::vector<std::string>{"a", "b", "c"});
  CHECK(records[1].fields == std::vector<std::string>{"1", R"({"H": 4096, "bias": false})", "x"});
  CHECK(records[2].fields == std::vector<std::string>{"2", "two\r\nlines", "y"});
  CHECK(records[3].fields == std::vector<std::string>{"3", "", ""});
  // A record is reported at the line where it starts.
  CHECK(records[1].line == 2);
  CHECK(records[2].line == 3);
  CHECK(records[3].line == 5);
  for (const auto &record : records) CHECK_FALSE(record.problem);
}

TEST_CASE("LF endings, a missing final newline, a byte order mark and empty lines", "[import][csv]") {
  const auto records = read_csv("\xEF\xBB\xBFx,y\n\n1,2\n\n\"\",3");
  REQUIRE(records.size() == 3);
  CHECK(records[0].fields == std::vector<std::string>{"x", "y"});
  CHECK(records[1].fields == std::vector<std::string>{"1", "2"});
  CHECK(records[1].line == 3);
  CHECK(records[2].fields == std::vector<std::string>{"", "3"});
  CHECK(records[2].line == 5);
}

TEST_CASE("records that break RFC 4180 are marked, and reading goes on", "[import][csv]") {
  SECTION("text after a closing quote") {
    const auto records = read_csv("a,b\n\"x\"y,2\n3,4\n");
    REQUIRE(records.size() == 3);
    REQUIRE(records[1].problem);
    CHECK_THAT(*records[1].problem, Contains("field 1") && Contains("after the closing quote"));
    CHECK_FALSE(records[2].problem);
    CHECK(records[2].fields == std::vector<std::string>{"3", "4"});
  }
  SECTION("a quote inside an unquoted field") {
    const auto records = read_csv("a,b\n1,x\"y\n");
    REQUIRE(records.size() == 2);
    REQUIRE(records[1].problem);
    CHECK_THAT(*records[1].problem, Contains("field 2") && Contains("quote inside an unquoted field"));
  }
  SECTION("a quoted field that never closes swallows the rest") {
    const auto records = read_csv("a,b\n1,\"open\n2,3\n");
    REQUIRE(records.size() == 2);
    REQUIRE(records[1].problem);
    CHECK_THAT(*records[1].problem, Contains("never closes"));
    CHECK(records[1].line == 2);
  }
}

TEST_CASE("the header finds columns by name, in any order", "[import][csv]") {
  const auto records = read_csv("y,x\n2,1\n");
  static constexpr std::array<std::string_view, 2> kRequired{"x", "y"};
  const CsvHeader header(records[0], kRequired, "t.csv");
  CHECK(header.column_count() == 2);
  CHECK(header.field(records[1], "x") == "1");
  CHECK(header.field(records[1], "y") == "2");
}

TEST_CASE("a missing or repeated column is an input error naming file and column", "[import][csv]") {
  static constexpr std::array<std::string_view, 2> kRequired{"x", "gpu_name"};
  const auto missing = read_csv("x,y\n1,2\n");
  CHECK_THROWS_MATCHES(CsvHeader(missing[0], kRequired, "rows.csv"), kibench::InputError,
                       Catch::Matchers::Message("rows.csv:1: header: missing column \"gpu_name\""));
  const auto repeated = read_csv("x,gpu_name,x\n");
  CHECK_THROWS_MATCHES(CsvHeader(repeated[0], kRequired, "rows.csv"), kibench::InputError,
                       Catch::Matchers::Message("rows.csv:1: header: column \"x\" appears twice"));
}
