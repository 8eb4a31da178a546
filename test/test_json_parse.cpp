#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "lib/error.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "test/source_tree.hpp"

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
  const auto seed = kibench::test::test_data_dir() / "seed" / "seed-record.json";
  const auto record = kibench::json::parse_file(seed);
  CHECK(record.find("run") != nullptr);
  CHECK_THROWS_WITH(kibench::json::parse_file("/nonexistent/kibench/x.json"),
                    "/nonexistent/kibench/x.json: cannot read: No such file or directory");
  CHECK_THROWS_WITH(kibench::json::parse_file(kibench::test::test_data_dir()), Contains("cannot read"));
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

TEST_CASE("a fraction of more than 18 digits is not taken for a big integer", "[json][parse]") {
  using kibench::json::canonical;
  // The manifest fuzz target's reproducer (test/fuzz/corpus/fuzz_manifest):
  // 1e20 is written 100000000000000000000, which sends the text through the
  // big-integer widening, which must leave the fraction's digits alone.
  const auto value = parse("[1e20,0.0012345678901234567]", "t");
  CHECK(canonical(value) == "[100000000000000000000,0.0012345678901234567]");
  CHECK(parse(canonical(value), "again") == value);
  CHECK(parse("[100000000000000000000, 0.0012345678901234567, -1.23456789012345678901e-5, 1E+21]", "t")
            .as_array()
            .size() == 4);
}

TEST_CASE("every valid number reads, and its canonical and pretty forms read back as the same value",
          "[json][parse][property]") {
  using kibench::json::canonical;
  using kibench::json::pretty;
  std::mt19937_64 random(20261204);
  const auto digits = [&](std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<char>('0' + random() % 10));
    return out;
  };
  for (int i = 0; i < 4000; ++i) {
    // A valid number literal as a person or another tool may write it: a
    // sign, up to 30 integer digits (no leading zero), up to 30 fraction
    // digits, an exponent that keeps it within double's range.
    const std::size_t integer_digits = 1 + random() % 30;
    std::string literal = random() % 2 ? "-" : "";
    literal += std::to_string(1 + random() % 9) + digits(integer_digits - 1);
    if (random() % 2) literal += "." + digits(1 + random() % 30);
    if (random() % 3 == 0) {
      const int exponent = static_cast<int>(random() % 600) - 300 - static_cast<int>(integer_digits);
      literal += (random() % 2 ? "e" : "E") + std::to_string(exponent);
    }
    // And a double as the writers produce one: from random bits, or (where
    // JCS writes long fractions and long integers) between 1e-7 and 1e21.
    double written = 0;
    if (random() % 2) {
      do {
        const std::uint64_t bits = random();
        std::memcpy(&written, &bits, sizeof written);
      } while (!std::isfinite(written));
    } else {
      written = (static_cast<double>(random() >> 11) * 0x1.0p-53) *
                std::pow(10.0, static_cast<int>(random() % 29) - 7);
    }
    // Both in one document: one number sending the text through the
    // big-integer widening must not spoil another.
    const std::string text =
        "{\"literal\": [" + literal + "], \"written\": " + canonical(kibench::json::Value(written)) + "}";
    INFO("text: " << text);
    kibench::json::Value value;
    REQUIRE_NOTHROW(value = parse(text, "t"));
    CHECK(value.find("written")->as_number() == written);
    REQUIRE_NOTHROW(parse(canonical(value), "canonical"));
    CHECK(parse(canonical(value), "canonical") == value);
    CHECK(parse(pretty(value), "pretty") == value);
  }
}

TEST_CASE("text that is not UTF-8 is refused saying which encoding and where", "[json][parse]") {
  using namespace std::string_literals;
  CHECK_THROWS_WITH(
      parse("\xEF\xBB\xBF{}", "bom.json"),
      "bom.json: $: invalid JSON: a UTF-8 byte order mark (EF BB BF) at byte 0; save the file as "
      "UTF-8 without one");
  CHECK_THROWS_WITH(parse("\xFF\xFE{\0}\0"s, "le.json"),
                    Contains("UTF-16 little-endian") && Contains("byte order mark FF FE at byte 0"));
  CHECK_THROWS_WITH(parse("\xFE\xFF\0{\0}"s, "be.json"), Contains("UTF-16 big-endian"));
  CHECK_THROWS_WITH(parse("{\0}\0"s, "le.json"), Contains("UTF-16 little-endian text (a NUL byte at byte 1"));
  CHECK_THROWS_WITH(parse("\0{\0}"s, "be.json"), Contains("UTF-16 big-endian text (a NUL byte at byte 0"));
  CHECK_THROWS_WITH(parse("{\0\0\0}\0\0\0"s, "32.json"), Contains("UTF-32 little-endian"));
  CHECK_THROWS_WITH(parse("{\n  \"a\": \"caf\xE9\"\n}", "latin1.json"),
                    "latin1.json: $: invalid JSON: not UTF-8: byte 0xE9 at line 2, column 12 (byte 13)");
  CHECK_THROWS_WITH(parse("{\"a\": \"tab\there\"}", "tab.json"),
                    Contains("control character U+0009 inside a string at line 1, column 11"));
}
