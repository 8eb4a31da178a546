#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using kibench::InputError;
using kibench::json::parse;

TEST_CASE("parse converts every JSON type and keeps insertion order", "[json][parse]") {
  const auto value =
      parse(R"({"z": null, "y": true, "x": -12, "w": 2.5e3, "v": "t\u00e9xt", "u": [1, {}]})", "t");
  REQUIRE(value.is_object());
  const auto &object = value.as_object();
  REQUIRE(object.size() == 6);
  CHECK(object.begin()->first == "z");
  CHECK(value.find("z")->is_null());
  CHECK(value.find("y")->as_bool());
  CHECK(value.find("x")->as_number() == -12.0);
  CHECK(value.find("w")->as_number() == 2500.0);
  CHECK(value.find("v")->as_string() == "t\xc3\xa9xt");
  REQUIRE(value.find("u")->as_array().size() == 2);
  CHECK(value.find("u")->as_array()[1].is_object());
}

TEST_CASE("parse stores 64-bit integers as the nearest double", "[json][parse]") {
  CHECK(parse("9007199254740993", "t").as_number() == 9007199254740992.0);
  CHECK(parse("18446744073709551615", "t").as_number() == 18446744073709551616.0);
  CHECK(parse("-9223372036854775808", "t").as_number() == -9223372036854775808.0);
}

TEST_CASE("duplicate keys are rejected with their JSON path", "[json][parse]") {
  CHECK_THROWS_WITH(parse(R"({"a": 1, "a": 2})", "top.json"), "top.json: $: duplicate key \"a\"");
  CHECK_THROWS_WITH(parse(R"({"spec": {"axes": {"vocab": 1, "hidden": 2, "vocab": 3}}})", "w.json"),
                    "w.json: $.spec.axes: duplicate key \"vocab\"");
  CHECK_THROWS_WITH(parse(R"({"list": [0, {"ok": 1}, {"k": 1, "k": 1}]})", "l.json"),
                    "l.json: $.list[2]: duplicate key \"k\"");
  CHECK_THROWS_WITH(parse(R"({"odd key": {"x": 1, "x": 1}})", "o.json"),
                    "o.json: $[\"odd key\"]: duplicate key \"x\"");
  // Keys differing only in case or escape spelling: "\u0061" is "a".
  CHECK_NOTHROW(parse(R"({"a": 1, "A": 2})", "t"));
  CHECK_THROWS_AS(parse(R"({"a": 1, "\u0061": 2})", "t"), InputError);
}

TEST_CASE("invalid JSON is an InputError naming the source", "[json][parse]") {
  for (const char *text : {"", "{", "[1, 2", "{\"a\" 1}", "NaN", "Infinity", "-Infinity", "[1, NaN]",
                           "{\"a\": 1} x", "[1,]", "'single'", "\"\\ud800\"", "01", "1e400", "\"\xff\""}) {
    INFO("text: " << text);
    CHECK_THROWS_AS(parse(text, "bad.json"), InputError);
    CHECK_THROWS_WITH(parse(text, "bad.json"), StartsWith("bad.json: $: invalid JSON"));
  }
}

TEST_CASE("parse_file reads files and names the unreadable ones", "[json][parse]") {
  const auto seed = std::filesystem::path(KIBENCH_TEST_DATA) / "seed" / "seed-record.json";
  const auto record = kibench::json::parse_file(seed);
  CHECK(record.find("run") != nullptr);
  CHECK_THROWS_WITH(kibench::json::parse_file("/nonexistent/kibench/x.json"),
                    "/nonexistent/kibench/x.json: cannot read: No such file or directory");
  CHECK_THROWS_WITH(kibench::json::parse_file(KIBENCH_TEST_DATA), Contains("cannot read"));
}

TEST_CASE("integers beyond 64 bits read back as the doubles JCS wrote", "[json][parse]") {
  using kibench::json::canonical;
  using kibench::json::parse;
  const auto value = parse(R"({"a": 100000000000000000000, "b": [-123456789012345678901234]})", "big.json");
  CHECK(value.find("a")->as_number() == 1e20);
  CHECK(canonical(*value.find("a")) == "100000000000000000000");
  CHECK(value.find("b")->as_array()[0].as_number() == -1.2345678901234568e23);
  CHECK(canonical(parse(canonical(value), "again.json")) == canonical(value));
}

TEST_CASE("a duplicate key with a control character is reported on one line", "[json][parse]") {
  try {
    kibench::json::parse("{\"a\\n\": 1, \"a\\n\": 2}", "dup.json");
    FAIL("accepted a duplicate key");
  } catch (const kibench::InputError &e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    CHECK(std::string(e.what()).find("duplicate key") != std::string::npos);
  }
}
