#include "lib/attest/statement.hpp"

#include <set>

#include <fmt/core.h>

#include "lib/error.hpp"
#include "lib/json/parse.hpp"

namespace kibench::attest {
namespace {

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

[[noreturn]] void malformed(std::string_view source, const std::string &path, std::string_view problem) {
  throw InputError(fmt::format("{}: {}: {}", source, path, problem));
}

Subject parse_subject(const json::Value &item, const std::string &path, std::string_view source) {
  if (!item.is_object()) malformed(source, path, "expected an object");
  const json::Value *name = item.find("name");
  if (name == nullptr || !name->is_string()) malformed(source, path + ".name", "expected a string");
  if (!is_plain_file_name(name->as_string())) {
    malformed(source, path + ".name", "expected a file name without a directory");
  }
  const json::Value *digest = item.find("digest");
  const json::Value *sha256 = digest == nullptr ? nullptr : digest->find("sha256");
  if (sha256 == nullptr || !sha256->is_string() || !is_sha256_hex(sha256->as_string())) {
    malformed(source, path + ".digest.sha256", "expected 64 lowercase hex digits");
  }
  return {name->as_string(), sha256->as_string()};
}

} // namespace

bool is_plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

json::Value statement_json(const Statement &statement) {
  json::Array subjects;
  for (const auto &subject : statement.subjects) {
    subjects.push_back(
        json::Object{{"name", subject.name}, {"digest", json::Object{{"sha256", subject.sha256}}}});
  }
  return json::Object{
      {"_type", statement_type},
      {"subject", std::move(subjects)},
      {"predicateType", statement.predicate_type},
      {"predicate", statement.predicate},
  };
}

Statement parse_statement(std::string_view text, std::string_view source) {
  const json::Value document = json::parse(text, source);
  const json::Value *type = document.find("_type");
  if (type == nullptr || !type->is_string() || type->as_string() != statement_type) {
    throw InputError(fmt::format("{}: $._type: expected \"{}\"", source, statement_type));
  }
  Statement statement;
  const json::Value *subjects = document.find("subject");
  if (subjects == nullptr || !subjects->is_array()) {
    throw InputError(fmt::format("{}: $.subject: expected an array", source));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < subjects->as_array().size(); ++i) {
    const std::string path = fmt::format("$.subject[{}]", i);
    Subject subject = parse_subject(subjects->as_array()[i], path, source);
    if (!names.insert(subject.name).second) {
      throw InputError(fmt::format("{}: {}.name: \"{}\" appears twice", source, path, subject.name));
    }
    statement.subjects.push_back(std::move(subject));
  }
  const json::Value *predicate_type = document.find("predicateType");
  if (predicate_type == nullptr || !predicate_type->is_string()) {
    throw InputError(fmt::format("{}: $.predicateType: expected a string", source));
  }
  statement.predicate_type = predicate_type->as_string();
  if (const json::Value *predicate = document.find("predicate")) statement.predicate = *predicate;
  return statement;
}

} // namespace kibench::attest
