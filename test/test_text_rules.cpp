// Text from inputs: the pattern checks that replace std::regex (linear,
// whatever the length), UTF-8 checked, repaired and cut on character
// boundaries, and the JSON writers that never write a byte that is not
// UTF-8.
#include <catch2/catch.hpp>

#include <string>

#include "lib/compare/protocol_terms.hpp"
#include "lib/implementation/revision_facts.hpp"
#include "lib/io/text_rules.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/manifest/implementation_manifest.hpp"

using namespace kibench;
using Catch::Matchers::Contains;

TEST_CASE("name and digest rules hold without a regular expression, on any length", "[text-rules]") {
  CHECK(io::is_identifier("liger_kernel2"));
  CHECK_FALSE(io::is_identifier("2liger"));
  CHECK_FALSE(io::is_identifier("liger-kernel"));
  CHECK_FALSE(io::is_identifier(""));
  CHECK(io::is_lowercase_name("fused-vp2.emulated_x"));
  CHECK(io::is_lowercase_name("2d"));
  CHECK_FALSE(io::is_lowercase_name("-fused"));
  CHECK_FALSE(io::is_lowercase_name("Fused"));
  CHECK(io::is_sha256_digest("sha256:" + std::string(64, 'a')));
  CHECK_FALSE(io::is_sha256_digest("sha256:" + std::string(63, 'a')));
  CHECK_FALSE(io::is_sha256_digest("sha256:" + std::string(64, 'A')));
  CHECK(io::is_lowercase_hex(std::string(40, '0'), 40));
  CHECK_FALSE(io::is_lowercase_hex(std::string(40, 'g'), 40));
  // 100 000 characters overflowed std::regex_match's stack.
  CHECK(io::is_lowercase_name(std::string(100000, 'a')));
  CHECK(io::is_identifier(std::string(1000000, 'z')));
}

TEST_CASE("UTF-8 is checked, repaired with U+FFFD and cut between characters", "[text-rules][utf8]") {
  CHECK(io::is_utf8("grüße 😀"));
  CHECK(io::first_invalid_utf8("ab\xC3") == 2);
  CHECK(io::first_invalid_utf8("\xED\xA0\x80") == 0); // a surrogate
  CHECK(io::repair_utf8("ab\xC3") == "ab\xEF\xBF\xBD");
  CHECK(io::repair_utf8("\xFF\xFEok") == "\xEF\xBF\xBD\xEF\xBF\xBDok");
  CHECK(io::repair_utf8("grüße") == "grüße");
  // "ü" is two bytes: a cut at 3 bytes of "aü b" would split it.
  CHECK(io::cut_utf8("a\xC3\xBC b", 2) == "a");
  CHECK(io::cut_utf8("a\xC3\xBC b", 3) == "a\xC3\xBC");
  CHECK(io::cut_utf8("😀x", 3).empty());
  CHECK(io::cut_utf8("short", 100) == "short");
  CHECK(io::excerpt(std::string(120000, 'x')) == std::string(80, 'x') + "… (120000 bytes)");
  CHECK(io::excerpt("short") == "short");
}

TEST_CASE("a string that is not UTF-8 is written repaired, so the file reads back",
          "[text-rules][utf8][json]") {
  // A reason cut mid-character ("Ã" is C3 83) and a stray byte in a key.
  const json::Value value = json::Object{{"reason", std::string("fell over at \xC3")}, {"k\xFF", 1}};
  for (const std::string &text : {json::canonical(value), json::pretty(value)}) {
    INFO(text);
    CHECK(io::is_utf8(text));
    const json::Value back = json::parse(text, "written.json");
    CHECK(back.find("reason")->as_string() == "fell over at \xEF\xBF\xBD");
    CHECK(back.find("k\xEF\xBF\xBD") != nullptr);
  }
  // The digest computed before writing is the one recomputed from the file.
  CHECK(json::canonical(json::parse(json::pretty(value), "written.json")) == json::canonical(value));
}

TEST_CASE("revision facts of any length are checked without a crash, and named briefly",
          "[text-rules][manifest]") {
  RevisionFacts facts;
  facts.name = std::string(100000, 'a');
  facts.operation_digest = "sha256:" + std::string(64, '0');
  facts.language = "python";
  facts.source.version = "1.0";
  CHECK_THROWS_WITH(implementation_manifest(facts),
                    Contains("(100000 bytes)") && Contains("metadata.name must match"));
  facts.name = "lane";
  facts.labels[std::string(50000, 'k')] = "v";
  CHECK_THROWS_WITH(implementation_manifest(facts), Contains("metadata.labels key") &&
                                                        Contains("(50000 bytes)") &&
                                                        Contains("at most 100 characters"));
}

TEST_CASE("protocol notes too long to read are compared as text, without a crash", "[text-rules][compare]") {
  // 100 000 characters inside the interleaving clause overflowed std::regex's
  // stack (SIGSEGV) in compare, report and export.
  const std::string notes =
      "Samples interleaved round by round: yes, in a Williams-design order" + std::string(100000, 'x') + ").";
  const compare::NotesReading reading = compare::read_notes_settings(notes);
  CHECK(reading.settings.empty());
  CHECK(reading.rest == notes);
  CHECK_FALSE(compare::minimum_effect_in("smaller than 0." + std::string(100000, '1') + " relative"));
  // Out of a double's range: no stated effect (std::stod threw, exit 3).
  CHECK_FALSE(compare::minimum_effect_in("smaller than 1e999 relative"));
  REQUIRE(compare::minimum_effect_in("smaller than 0.5 %"));
  CHECK(*compare::minimum_effect_in("smaller than 0.5 %") == Approx(0.005));
}
