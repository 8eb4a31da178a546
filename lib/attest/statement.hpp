// An in-toto v1 Statement (in-toto/attestation spec/v1/statement.md): the
// files it is about (subjects, each with its SHA-256) and a typed predicate
// saying what is claimed about them.
//   {"_type": "https://in-toto.io/Statement/v1",
//    "subject": [{"name": "run.fused.json", "digest": {"sha256": "<hex>"}}],
//    "predicateType": "<uri>", "predicate": {...}}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/json/value.hpp"

namespace kibench::attest {

inline constexpr std::string_view statement_type = "https://in-toto.io/Statement/v1";

struct Subject {
  std::string name;   // a file name inside the attested directory
  std::string sha256; // lowercase hex
};

struct Statement {
  std::vector<Subject> subjects;
  std::string predicate_type;
  json::Value predicate;
};

json::Value statement_json(const Statement &statement);

// InputError "<source>: <json path>: <problem>" when `text` is not such a
// Statement: another _type, a subject without a sha256 of 64 lowercase hex
// digits, a name that is not a plain file name (it would reach outside the
// directory) or that appears twice.
Statement parse_statement(std::string_view text, std::string_view source);

// A name that stays inside a directory: no separators, not "." or "..".
bool is_plain_file_name(std::string_view name);

} // namespace kibench::attest
