#include "lib/harness/raw_samples.hpp"

#include <fmt/core.h>

#include "lib/error.hpp"

namespace kibench {

json::Value raw_samples_document(const Measurement &m, const std::string &invocation_id) {
  json::Array samples;
  for (std::size_t i = 0; i < m.samples.size(); ++i) {
    const Sample &s = m.samples[i];
    json::Object entry{{"index", static_cast<std::uint64_t>(i)},
                       {"round", static_cast<std::uint64_t>(s.round)},
                       {"ns", s.ns},
                       {"throttled", s.throttled}};
    entry.set("smClockMHz", s.clock_mhz ? json::Value(*s.clock_mhz) : json::Value(nullptr));
    if (s.power_w) entry.set("boardPowerW", *s.power_w);
    if (s.rest) {
      entry.set("restWaitMs", s.rest->waited_s * 1e3);
      entry.set("restTimedOut", s.rest->hit_bound);
    }
    samples.emplace_back(std::move(entry));
  }
  return json::Object{{"format", std::string(kRawSamplesFormat)},
                      {"implementation", m.implementation},
                      {"invocation", invocation_id},
                      {"timer", m.timer},
                      {"stopReason", m.stop_reason},
                      {"unit", "ns"},
                      {"samples", std::move(samples)}};
}

Measurement read_raw_samples(const json::Value &doc, const std::string &source, std::string *invocation_id) {
  auto need = [&](const json::Value *v, std::string_view path, bool ok) -> const json::Value & {
    if (v == nullptr || !ok)
      throw InputError(fmt::format("{}: $.{}: missing or of the wrong type", source, path));
    return *v;
  };
  const json::Value *format = doc.find("format");
  if (format == nullptr || !format->is_string() || format->as_string() != kRawSamplesFormat)
    throw InputError(fmt::format("{}: $.format: not a kibench raw samples file", source));
  Measurement m;
  m.implementation = need(doc.find("implementation"), "implementation",
                          doc.find("implementation") && doc.find("implementation")->is_string())
                         .as_string();
  if (const json::Value *t = doc.find("timer"); t && t->is_string()) m.timer = t->as_string();
  if (const json::Value *r = doc.find("stopReason"); r && r->is_string()) m.stop_reason = r->as_string();
  if (invocation_id) {
    const json::Value *inv = doc.find("invocation");
    *invocation_id = inv && inv->is_string() ? inv->as_string() : "";
  }
  const json::Value *list = doc.find("samples");
  const json::Value &samples = need(list, "samples", list && list->is_array());
  std::size_t i = 0;
  for (const auto &entry : samples.as_array()) {
    const std::string where = fmt::format("samples[{}]", i++);
    const json::Value *ns = entry.find("ns");
    const json::Value *round = entry.find("round");
    need(ns, where + ".ns", ns && ns->is_number() && ns->as_number() >= 0);
    need(round, where + ".round", round && round->is_integer() && round->as_number() >= 0);
    Sample s;
    s.ns = ns->as_number();
    s.round = static_cast<std::size_t>(round->as_number());
    if (const json::Value *c = entry.find("smClockMHz"); c && c->is_number()) s.clock_mhz = c->as_number();
    if (const json::Value *w = entry.find("boardPowerW"); w && w->is_number()) s.power_w = w->as_number();
    if (const json::Value *th = entry.find("throttled"); th && th->is_bool()) s.throttled = th->as_bool();
    if (const json::Value *wait = entry.find("restWaitMs"); wait && wait->is_number()) {
      const json::Value *bound = entry.find("restTimedOut");
      s.rest = RestOutcome{wait->as_number() / 1e3, bound && bound->is_bool() && bound->as_bool()};
    }
    m.samples.push_back(s);
  }
  if (m.samples.empty()) throw InputError(fmt::format("{}: $.samples: no samples", source));
  return m;
}

} // namespace kibench
