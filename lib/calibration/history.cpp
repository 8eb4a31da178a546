#include "lib/calibration/history.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include "lib/manifest/run_manifest.hpp"
#include "lib/json/canonical.hpp"
#include "lib/json/parse.hpp"
#include "lib/stats/summary.hpp"

namespace kibench::calibration {

namespace fs = std::filesystem;

namespace {

std::string file_safe(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    out += keep ? c : '_';
  }
  return out.substr(0, 120);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "host";
  return name;
}

json::Value to_json(const SentinelSet &set) {
  json::Array readings;
  for (const SentinelReading &r : set.readings)
    readings.emplace_back(json::Object{{"name", r.name},
                                       {"unit", r.unit},
                                       {"value", r.value},
                                       {"higherIsBetter", r.higher_is_better}});
  return json::Object{{"time", utc_timestamp_now()}, {"device", set.device}, {"readings", std::move(readings)}};
}

std::optional<SentinelSet> from_json(const json::Value &v) {
  if (!v.is_object()) return std::nullopt;
  const json::Value *device = v.as_object().find("device");
  const json::Value *readings = v.as_object().find("readings");
  if (device == nullptr || !device->is_string() || readings == nullptr || !readings->is_array())
    return std::nullopt;
  SentinelSet set{device->as_string(), {}};
  for (const json::Value &r : readings->as_array()) {
    if (!r.is_object()) return std::nullopt;
    const auto &o = r.as_object();
    const json::Value *name = o.find("name"), *unit = o.find("unit"), *value = o.find("value"),
                      *higher = o.find("higherIsBetter");
    if (name == nullptr || !name->is_string() || unit == nullptr || !unit->is_string() || value == nullptr ||
        !value->is_number() || !(value->as_number() > 0.0) || higher == nullptr || !higher->is_bool())
      return std::nullopt;
    set.readings.push_back({name->as_string(), unit->as_string(), value->as_number(), higher->as_bool()});
  }
  return set;
}

const SentinelReading *find(const SentinelSet &set, const std::string &name) {
  for (const SentinelReading &r : set.readings)
    if (r.name == name) return &r;
  return nullptr;
}

} // namespace

std::optional<fs::path> history_dir() {
  if (const char *dir = std::getenv("KIBENCH_CALIBRATION_DIR"); dir != nullptr && *dir != '\0') return fs::path(dir);
  if (const char *cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache == '/')
    return fs::path(cache) / "kibench" / "calibration";
  if (const char *home = std::getenv("HOME"); home != nullptr && *home == '/')
    return fs::path(home) / ".cache" / "kibench" / "calibration";
  return std::nullopt;
}

fs::path history_file(const fs::path &dir, const std::string &device) {
  return dir / (file_safe(host_name()) + "--" + file_safe(device) + ".jsonl");
}

std::vector<SentinelSet> read_history(const fs::path &file, const std::string &device) {
  std::ifstream in(file);
  std::vector<SentinelSet> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > 4096) continue;
    try {
      if (auto set = from_json(json::parse(line, file.string())); set && set->device == device)
        out.push_back(std::move(*set));
    } catch (const std::exception &) {
      // A torn or foreign line is not history.
    }
  }
  if (out.size() > kHistoryWindow) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(kHistoryWindow));
  return out;
}

void append_history(const fs::path &file, const SentinelSet &set) {
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  const std::string line = json::canonical(to_json(set)) + "\n";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: {}", file.string(), std::strerror(errno)));
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int write_error = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    throw std::runtime_error(fmt::format("{}: {}", file.string(), std::strerror(write_error)));
}

double relative_floor(std::string_view sentinel) {
  return sentinel == "launch" ? kLaunchFloor : kDriftLimit;
}

namespace {

// Readings that moved more than their limit between the start and the end:
// the board changed under the workload. The limit is the sentinel's
// relative floor, or its control band where the history's is wider.
void add_drift(Judgement &j, const SentinelSet &before, const SentinelSet &after,
               const std::map<std::string, double> &relative_bands = {}) {
  for (const SentinelReading &b : before.readings) {
    const SentinelReading *a = find(after, b.name);
    if (a == nullptr || !(b.value > 0.0)) continue;
    const double moved = a->value / b.value - 1.0;
    double limit = relative_floor(b.name);
    if (const auto band = relative_bands.find(b.name); band != relative_bands.end())
      limit = std::max(limit, band->second);
    if (std::fabs(moved) > limit)
      j.caveats.push_back(fmt::format("{} moved {:+.0f} % between the start and the end ({:.3g} → {:.3g} {})",
                                      b.name, 100.0 * moved, b.value, a->value, b.unit));
  }
}

} // namespace

Judgement judge(const std::vector<SentinelSet> &history, const SentinelSet &before, const SentinelSet &after) {
  Judgement j;
  if (history.size() < kMinHistory) {
    j.basis = fmt::format("no control limits yet: {} earlier clean run{} on this machine (they start at {})",
                          history.size(), history.size() == 1 ? "" : "s", kMinHistory);
    add_drift(j, before, after);
    return j;
  }
  j.basis = fmt::format("control limits from the last {} clean runs on this machine", history.size());
  std::size_t better = 0;
  std::map<std::string, double> relative_bands;
  for (const SentinelSet *set : {&before, &after}) {
    const char *when = set == &before ? "at the start" : "at the end";
    for (const SentinelReading &r : set->readings) {
      std::vector<double> values;
      for (const SentinelSet &h : history)
        if (const SentinelReading *p = find(h, r.name)) values.push_back(p->value);
      if (values.size() < kMinHistory) continue;
      const double m = stats::median(values);
      std::vector<double> deviations;
      for (double v : values) deviations.push_back(std::fabs(v - m));
      const double sigma = 1.4826 * stats::median(std::move(deviations));
      const double band = std::max(4.0 * sigma, relative_floor(r.name) * m);
      if (m > 0.0) relative_bands[r.name] = band / m;
      if (std::fabs(r.value - m) <= band) continue;
      // Only the slow side is a caveat (a co-running job, a throttled or
      // degraded board). A board faster than its history is not, and its
      // run enters the history, so limits learnt on a busy machine follow
      // it when it is quiet.
      const bool worse = r.higher_is_better ? r.value < m : r.value > m;
      if (worse)
        j.caveats.push_back(fmt::format("{} {} {:.3g} {}, worse than the control limits {:.3g}–{:.3g}", r.name, when,
                                        r.value, r.unit, m - band, m + band));
      else
        ++better;
    }
  }
  if (better > 0)
    j.basis += fmt::format(" ({} reading{} better than them)", better, better == 1 ? "" : "s");
  add_drift(j, before, after, relative_bands);
  return j;
}

} // namespace kibench::calibration
