#include "lib/attest/run_predicate.hpp"

#include <fmt/core.h>

#include "lib/error.hpp"

namespace kibench::attest {
namespace {

std::string string_at(const json::Value *object, std::string_view key, const std::string &path,
                      std::string_view source) {
  const json::Value *member = object == nullptr ? nullptr : object->find(key);
  if (member == nullptr || !member->is_string()) {
    throw InputError(fmt::format("{}: {}.{}: expected a string", source, path, key));
  }
  return member->as_string();
}

} // namespace

json::Value run_predicate_json(const RunPredicate &predicate) {
  json::Array runs;
  for (const auto &run : predicate.runs) {
    runs.push_back(json::Object{{"file", run.file}, {"name", run.name}, {"digest", run.digest}});
  }
  return json::Object{
      {"kibench", json::Object{{"version", predicate.kibench_version}}},
      {"createdAt", predicate.created_at},
      {"runs", std::move(runs)},
  };
}

RunPredicate parse_run_predicate(const json::Value &predicate, std::string_view source) {
  if (!predicate.is_object()) throw InputError(fmt::format("{}: $.predicate: expected an object", source));
  RunPredicate out;
  out.kibench_version = string_at(predicate.find("kibench"), "version", "$.predicate.kibench", source);
  out.created_at = string_at(&predicate, "createdAt", "$.predicate", source);
  const json::Value *runs = predicate.find("runs");
  if (runs == nullptr || !runs->is_array()) {
    throw InputError(fmt::format("{}: $.predicate.runs: expected an array", source));
  }
  for (std::size_t i = 0; i < runs->as_array().size(); ++i) {
    const json::Value &run = runs->as_array()[i];
    const std::string path = fmt::format("$.predicate.runs[{}]", i);
    out.runs.push_back({string_at(&run, "file", path, source), string_at(&run, "name", path, source),
                        string_at(&run, "digest", path, source)});
  }
  return out;
}

} // namespace kibench::attest
