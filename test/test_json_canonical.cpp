#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"

using kibench::json::canonical;
using kibench::json::format_number;
using kibench::json::parse;
using kibench::json::pretty;

namespace {

// A decimal's significant digits (no leading or trailing zeros) and the
// power of ten of its first digit: "0.00120" -> {"12", -3}, "1.5e+300" ->
// {"15", 300}, "100" -> {"1", 2}. Independent of the code under test.
struct Significand {
  std::string digits;
  int exponent = 0;
  bool operator==(const Significand &) const = default;
};

Significand significand_of(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  int explicit_exponent = 0;
  if (const auto e = text.find_first_of("eE"); e != std::string_view::npos) {
    explicit_exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
    text = text.substr(0, e);
  }
  const auto point = text.find('.');
  const int integer_digits = static_cast<int>(point == std::string_view::npos ? text.size() : point);
  std::string all;
  for (const char c : text) {
    if (c != '.') all.push_back(c);
  }
  const auto first = all.find_first_not_of('0');
  if (first == std::string::npos) return {"0", 0};
  const auto last = all.find_last_not_of('0');
  return {all.substr(first, last - first + 1),
          integer_digits - 1 - static_cast<int>(first) + explicit_exponent};
}

std::string printf_scientific(double x, int significant_digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*e", significant_digits - 1, x);
  return buffer;
}

// ECMAScript Number::toString, checked from the outside: the text parses
// back to x, its digits are as few as possible and, among that many, the
// closest to x (printf's correctly rounded digits); plain notation exactly
// when 1e-6 <= |x| < 1e21.
void check_ecmascript_number(double x) {
  const std::string text = format_number(x);
  INFO("x = " << printf_scientific(x, 17) << ", text = " << text);
  REQUIRE(std::strtod(text.c_str(), nullptr) == x);

  const Significand written = significand_of(text);
  const int k = static_cast<int>(written.digits.size());
  CHECK(significand_of(printf_scientific(x, k)) == written);
  if (k > 1) CHECK(std::strtod(printf_scientific(x, k - 1).c_str(), nullptr) != x);

  const double magnitude = std::fabs(x);
  const bool plain = magnitude >= 1e-6 && magnitude < 1e21;
  CHECK((text.find('e') == std::string::npos) == plain);
  if (!plain) {
    // d[.ddd]e±n: one digit before the point, a sign always.
    const auto e = text.find('e');
    CHECK((text[e + 1] == '+' || text[e + 1] == '-'));
    const auto mantissa = text.substr(x < 0 ? 1 : 0, e - (x < 0 ? 1 : 0));
    CHECK((mantissa.size() == 1 || mantissa[1] == '.'));
  } else {
    CHECK(text.find(".0") != text.size() - 2); // integers carry no ".0"
    if (text.find('.') != std::string::npos) CHECK(text.back() != '0');
  }
}

} // namespace

TEST_CASE("numbers: the kernelindex README vectors", "[json][canonical][number]") {
  CHECK(format_number(1.0048658277929109e-05) == "0.000010048658277929109");
  CHECK(format_number(1e-7) == "1e-7");
  CHECK(format_number(1e21) == "1e+21");
  CHECK(format_number(123e20) == "1.23e+22");
  CHECK(format_number(-0.0) == "0");
  CHECK(format_number(213.1598663330078) == "213.1598663330078");
  CHECK(format_number(5e-324) == "5e-324");
}

TEST_CASE("numbers: the RFC 8785 appendix vectors by bit pattern", "[json][canonical][number]") {
  const std::pair<std::uint64_t, const char *> vectors[] = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
  };
  for (const auto &[bits, expected] : vectors) {
    INFO("bits 0x" << std::hex << bits);
    CHECK(format_number(std::bit_cast<double>(bits)) == expected);
  }
}

TEST_CASE("numbers: integers and the plain/exponent boundaries", "[json][canonical][number]") {
  CHECK(format_number(1.0) == "1");
  CHECK(format_number(-42.0) == "-42");
  CHECK(format_number(1e20) == "100000000000000000000");
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(0.000001) == "0.000001");
  CHECK(format_number(-1.5e-7) == "-1.5e-7");
  CHECK(format_number(1.5e21) == "1.5e+21");
  CHECK(format_number(std::numeric_limits<double>::denorm_min()) == "5e-324");
}

TEST_CASE("numbers: random finite doubles round-trip with ECMAScript digits", "[json][canonical][number]") {
  std::mt19937_64 rng(20241203);
  // Random bit patterns cover every exponent; most land in exponent form.
  int checked = 0;
  while (checked < 12000) {
    const double x = std::bit_cast<double>(rng());
    if (!std::isfinite(x)) continue;
    check_ecmascript_number(x);
    ++checked;
  }
  // And the plain-notation range around it, 1e-8 .. 1e23, where the point
  // moves through the digits.
  std::uniform_real_distribution<double> decade(-8.0, 23.0);
  for (int i = 0; i < 12000; ++i) {
    const double magnitude = std::pow(10.0, decade(rng));
    check_ecmascript_number(i % 2 == 0 ? magnitude : -magnitude);
  }
  // Integers (exact below 2^53, then even ones).
  std::uniform_int_distribution<std::int64_t> integers(-(std::int64_t{1} << 62), std::int64_t{1} << 62);
  for (int i = 0; i < 2000; ++i) check_ecmascript_number(static_cast<double>(integers(rng)));
}

TEST_CASE("non-finite numbers cannot be canonicalized", "[json][canonical][number]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(format_number(nan), std::invalid_argument);
  CHECK_THROWS_AS(format_number(inf), std::invalid_argument);
  CHECK_THROWS_AS(format_number(-inf), std::invalid_argument);
  const kibench::json::Value nested = kibench::json::Object{{"a", kibench::json::Array{1, nan}}};
  CHECK_THROWS_AS(canonical(nested), std::invalid_argument);
  CHECK_THROWS_AS(pretty(nested), std::invalid_argument);
}

TEST_CASE("strings: only quote, backslash and control characters are escaped", "[json][canonical]") {
  const kibench::json::Value text = std::string("\"\\/\b\t\n\f\r") + std::string(1, '\0') +
                                    "\x01\x1f\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  CHECK(canonical(text) ==
        "\"\\\"\\\\/\\b\\t\\n\\f\\r\\u0000\\u0001\\u001f\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // Escaped input decodes and is written back literally.
  CHECK(canonical(parse(R"("\u00e9\u20ac\ud83d\ude00\u001A\/")", "t")) ==
        "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\u001a/\"");
}

TEST_CASE("objects: keys sorted by UTF-16 code units", "[json][canonical]") {
  // RFC 8785 section 3.2.3's sorting example.
  const auto rfc = parse(R"({
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis"
  })",
                         "rfc");
  CHECK(canonical(rfc) ==
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\","
        "\"\xc3\xb6\":\"Latin Small Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\","
        "\"\xf0\x9f\x98\x80\":\"Emoji: Grinning Face\","
        "\"\xef\xac\xb3\":\"Hebrew Letter Dalet With Dagesh\"}");

  // Above U+FFFF (surrogates D800..DFFF) sorts before U+E000..U+FFFF, unlike
  // code point or UTF-8 byte order.
  const auto high = parse(R"({"\uffff": 1, "\ue000": 2, "\ud800\udc00": 3, "\uff61": 4, "\ud7ff": 5})", "t");
  CHECK(canonical(high) == "{\"\xed\x9f\xbf\":5,\"\xf0\x90\x80\x80\":3,\"\xee\x80\x80\":2,\"\xef\xbd\xa1\":4,"
                           "\"\xef\xbf\xbf\":1}");

  // Prefixes first; nested objects sorted too; arrays keep their order.
  const auto nested = parse(R"({"b": [3, 1, {"y": 1, "x": 2}], "a": {"bb": 1, "b": 2}, "": 0})", "t");
  CHECK(canonical(nested) == R"({"":0,"a":{"b":2,"bb":1},"b":[3,1,{"x":2,"y":1}]})");
}

TEST_CASE("canonical has no whitespace and writes every literal", "[json][canonical]") {
  const auto value = parse(R"( { "n" : null , "t" : true , "f" : false , "e" : [ ] , "o" : { } } )", "t");
  CHECK(canonical(value) == R"({"e":[],"f":false,"n":null,"o":{},"t":true})");
}

TEST_CASE("keys that are not UTF-8 are ordered and written repaired, as U+FFFD", "[json][canonical][utf8]") {
  const kibench::json::Value bad = kibench::json::Object{{"\xff", 1}, {"a", 2}};
  CHECK(canonical(bad) == "{\"a\":2,\"\xEF\xBF\xBD\":1}");
}

TEST_CASE("pretty keeps insertion order with two-space indentation", "[json][canonical][pretty]") {
  const auto value = parse(R"({"b": [1, 1e21, {"z": []}], "a": {}, "c": "\n"})", "t");
  CHECK(pretty(value) == "{\n"
                         "  \"b\": [\n"
                         "    1,\n"
                         "    1e+21,\n"
                         "    {\n"
                         "      \"z\": []\n"
                         "    }\n"
                         "  ],\n"
                         "  \"a\": {},\n"
                         "  \"c\": \"\\n\"\n"
                         "}");
  CHECK(parse(pretty(value), "round trip") == value);
  CHECK(pretty(kibench::json::Value(-0.0)) == "0");
}
