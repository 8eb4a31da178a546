#include "lib/run/shard.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "lib/error.hpp"
#include "lib/io/terminal_text.hpp"
#include "lib/io/text_rules.hpp"

namespace kibench {
namespace {

// A whole number of at most 9 digits (a billion shards is beyond any job
// array), or nullopt.
std::optional<std::size_t> whole_number(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string shown(std::string_view text) {
  return fmt::format("{:?}", io::printable(io::excerpt(text)));
}

std::size_t number_from(const char *name, const std::string &value) {
  const auto number = whole_number(value);
  if (!number) throw InputError(fmt::format("{}={}: not a whole number", name, shown(value)));
  return *number;
}

Shard checked(std::size_t index, std::size_t count, std::string source) {
  if (count == 0) throw InputError(fmt::format("{}: a count of 0 shards", source));
  if (index >= count)
    throw InputError(fmt::format("{}: index {} is not below the count {}", source, index, count));
  return Shard{index, count, std::move(source)};
}

// A scheduler's index and count variables, read as whole numbers: nullopt
// when neither is set, an InputError when one is set without the other.
std::optional<std::pair<std::size_t, std::size_t>> index_and_count(const EnvironmentReader &environment,
                                                                   const char *index_name, const char *count_name) {
  const auto index = environment(index_name);
  const auto count = environment(count_name);
  if (!index && !count) return std::nullopt;
  if (!index || !count)
    throw InputError(fmt::format("{} is set without {}", index ? index_name : count_name,
                                 index ? count_name : index_name));
  return std::pair{number_from(index_name, *index), number_from(count_name, *count)};
}

std::optional<Shard> from_slurm(const EnvironmentReader &environment) {
  const auto pair = index_and_count(environment, "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT");
  if (!pair) return std::nullopt;
  std::size_t index = pair->first;
  std::string source = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT";
  // An array --array=1-8 numbers its tasks from 1: the index counts from
  // the array's first task.
  if (const auto minimum = environment("SLURM_ARRAY_TASK_MIN")) {
    const std::size_t first = number_from("SLURM_ARRAY_TASK_MIN", *minimum);
    if (first > index)
      throw InputError(fmt::format("SLURM_ARRAY_TASK_ID={} is below SLURM_ARRAY_TASK_MIN={}", index, first));
    index -= first;
    source += " less SLURM_ARRAY_TASK_MIN";
  }
  return checked(index, pair->second, source);
}

std::optional<Shard> from_kubernetes(const EnvironmentReader &environment, std::optional<std::size_t> shards) {
  const auto index = environment("JOB_COMPLETION_INDEX");
  if (!index) return std::nullopt;
  if (!shards)
    throw InputError("JOB_COMPLETION_INDEX is set: give --shards N, the Job's completions (Kubernetes does not "
                     "put the count in the environment)");
  return checked(number_from("JOB_COMPLETION_INDEX", *index), *shards,
                 "JOB_COMPLETION_INDEX with --shards");
}

std::optional<Shard> from_test_sharding(const EnvironmentReader &environment) {
  const auto pair = index_and_count(environment, "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS");
  if (!pair) return std::nullopt;
  return checked(pair->first, pair->second, "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS");
}

} // namespace

std::string Shard::text() const {
  return fmt::format("{}/{}", index, count);
}

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto index = slash == std::string_view::npos ? std::nullopt : whole_number(text.substr(0, slash));
  const auto count = slash == std::string_view::npos ? std::nullopt : whole_number(text.substr(slash + 1));
  if (!index || !count)
    throw InputError(fmt::format("--shard: {} is not K/N (shard K of N, K from 0 to N - 1, e.g. 0/4)", shown(text)));
  return checked(*index, *count, "--shard");
}

EnvironmentReader process_environment() {
  return [](const char *name) -> std::optional<std::string> {
    const char *value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::optional<Shard> shard_from_environment(const EnvironmentReader &environment,
                                            std::optional<std::size_t> shards) {
  std::vector<Shard> found;
  for (auto &shard : {from_slurm(environment), from_kubernetes(environment, shards), from_test_sharding(environment)})
    if (shard) found.push_back(*shard);
  if (found.empty()) {
    if (shards) throw InputError("--shards: only with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); use --shard K/N");
    return std::nullopt;
  }
  for (const Shard &other : found)
    if (other.index != found.front().index || other.count != found.front().count)
      throw InputError(fmt::format("the environment names two shards: {} gives {}, {} gives {}",
                                   found.front().source, found.front().text(), other.source, other.text()));
  return found.front();
}

std::string point_label(std::size_t index, std::size_t count) {
  return fmt::format("{} of {}", index, count);
}

std::optional<std::pair<std::size_t, std::size_t>> parse_point_label(std::string_view label) {
  const std::size_t of = label.find(" of ");
  if (of == std::string_view::npos) return std::nullopt;
  const auto index = whole_number(label.substr(0, of));
  const auto count = whole_number(label.substr(of + 4));
  if (!index || !count || *index >= *count) return std::nullopt;
  return std::pair{*index, *count};
}

json::Value run_set_document(const std::vector<RunPoint> &points, const std::vector<std::string> &implementations,
                             const json::Value &settings) {
  json::Array list;
  for (std::size_t i = 0; i < points.size(); ++i)
    list.push_back(json::Object{{"index", static_cast<std::uint64_t>(i)},
                                {"workload", points[i].name},
                                {"workloadDigest", points[i].digest}});
  json::Array names;
  for (const std::string &name : implementations) names.push_back(name);
  return json::Object{{"kind", "KibenchRunSet"},
                      {"kibench", KIBENCH_VERSION},
                      {"points", std::move(list)},
                      {"implementations", std::move(names)},
                      {"settings", settings}};
}

std::string run_set_file_name(std::string_view run_set_digest) {
  const std::size_t colon = run_set_digest.find(':');
  const std::string_view hex = colon == std::string_view::npos ? run_set_digest : run_set_digest.substr(colon + 1);
  return fmt::format("run-set.{}.json", hex.substr(0, 16));
}

} // namespace kibench
