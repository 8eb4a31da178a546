#include "lib/worker/protocol.hpp"

#include <charconv>
#include <cstring>
#include <stdexcept>

#include <fmt/core.h>

#include "lib/enum_names.hpp"

namespace kibench::worker {

namespace {

const json::Value &member(const json::Value &message, std::string_view key) {
  const json::Value *found = message.is_object() ? message.as_object().find(key) : nullptr;
  if (found == nullptr) throw std::runtime_error(fmt::format("a worker message without \"{}\"", key));
  return *found;
}

std::optional<double> optional_number(const json::Value &message, std::string_view key) {
  const json::Value *found = message.as_object().find(key);
  if (found == nullptr || found->is_null()) return std::nullopt;
  if (!found->is_number())
    throw std::runtime_error(fmt::format("a worker message's \"{}\" is not a number", key));
  return found->as_number();
}

} // namespace

std::string string_member(const json::Value &message, std::string_view key) {
  const json::Value &v = member(message, key);
  if (!v.is_string()) throw std::runtime_error(fmt::format("a worker message's \"{}\" is not a string", key));
  return v.as_string();
}

double number_member(const json::Value &message, std::string_view key) {
  const json::Value &v = member(message, key);
  if (!v.is_number()) throw std::runtime_error(fmt::format("a worker message's \"{}\" is not a number", key));
  return v.as_number();
}

json::Object object_member(const json::Value &message, std::string_view key) {
  const json::Value &v = member(message, key);
  if (!v.is_object())
    throw std::runtime_error(fmt::format("a worker message's \"{}\" is not an object", key));
  return v.as_object();
}

json::Value double_to_json(double x) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return fmt::format("{:016x}", bits);
}

double double_from_json(const json::Value &value) {
  std::uint64_t bits = 0;
  const std::string &hex = value.is_string() ? value.as_string() : std::string();
  const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
  if (hex.size() != 16 || error != std::errc() || end != hex.data() + hex.size())
    throw std::runtime_error("a worker message's double is not 16 hexadecimal digits");
  double x = 0.0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

json::Value fingerprints_to_json(const std::vector<InputFingerprint> &fingerprints) {
  json::Array out;
  for (const InputFingerprint &f : fingerprints)
    out.emplace_back(
        json::Object{{"tensor", f.tensor}, {"copy", f.copy}, {"value", fmt::format("{:016x}", f.value)}});
  return out;
}

std::vector<InputFingerprint> fingerprints_from_json(const json::Value &value) {
  if (!value.is_array()) throw std::runtime_error("a worker message's fingerprints are not an array");
  std::vector<InputFingerprint> out;
  for (const json::Value &v : value.as_array()) {
    InputFingerprint f{string_member(v, "tensor"), string_member(v, "copy"), 0};
    const std::string hex = string_member(v, "value");
    const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), f.value, 16);
    if (error != std::errc() || end != hex.data() + hex.size())
      throw std::runtime_error(fmt::format("a worker message's fingerprint \"{}\" is not hexadecimal", hex));
    out.push_back(std::move(f));
  }
  return out;
}

json::Object sample_to_json(const RemoteSample &sample) {
  json::Object out{{"ns", sample.ns}};
  if (sample.clock_mhz) out.set("clock_mhz", *sample.clock_mhz);
  if (sample.power_w) out.set("power_w", *sample.power_w);
  return out;
}

RemoteSample sample_from_json(const json::Value &reply) {
  return {number_member(reply, "ns"), optional_number(reply, "clock_mhz"), optional_number(reply, "power_w")};
}

std::size_t gradient_bytes(const OutputView &out) {
  std::size_t bytes = 0;
  for (const OutputSlot &slot : kOutputSlots) {
    const TensorRef &t = out.*slot.member;
    if (!t.empty()) bytes += static_cast<std::size_t>(t.count) * element_bytes(t.type);
  }
  return bytes;
}

json::Object sustained_to_json(const std::optional<SustainedMeasurement> &sustained) {
  if (!sustained) return {{"measured", false}};
  json::Array rounds;
  for (const SustainedRound &r : sustained->rounds) {
    json::Object round{{"warmup_invocations", static_cast<std::uint64_t>(r.warmup_invocations)},
                       {"invocations", static_cast<std::uint64_t>(r.invocations)},
                       {"latency_ns", r.latency_ns}};
    if (const auto &p = r.power) {
      json::Object power{{"power_w", p->power_w}, {"window_s", p->window_s},
                         {"steps", static_cast<std::uint64_t>(p->steps)}};
      if (p->sm_clock_mhz) power.set("sm_clock_mhz", *p->sm_clock_mhz);
      round.set("power", std::move(power));
    }
    rounds.push_back(std::move(round));
  }
  return {{"measured", true}, {"monitor", sustained->monitor}, {"rounds", std::move(rounds)}};
}

std::optional<SustainedMeasurement> sustained_from_json(const json::Value &reply) {
  const json::Value &measured = member(reply, "measured");
  if (!measured.is_bool()) throw std::runtime_error("a worker message's \"measured\" is not a boolean");
  if (!measured.as_bool()) return std::nullopt;
  const auto count = [](const json::Value &message, std::string_view key) {
    const double v = number_member(message, key);
    if (!(v >= 0.0) || v > 1.0e9 || v != static_cast<double>(static_cast<std::size_t>(v)))
      throw std::runtime_error(fmt::format("a worker's {} of {}", key, v));
    return static_cast<std::size_t>(v);
  };
  const json::Value &listed = member(reply, "rounds");
  if (!listed.is_array() || listed.as_array().empty())
    throw std::runtime_error("a worker's sustained \"rounds\" is not a non-empty array");
  std::vector<SustainedRound> rounds;
  for (const json::Value &message : listed.as_array()) {
    SustainedRound r;
    r.warmup_invocations = count(message, "warmup_invocations");
    r.invocations = count(message, "invocations");
    r.latency_ns = number_member(message, "latency_ns");
    if (message.is_object() && message.as_object().find("power") != nullptr) {
      const json::Value &power = member(message, "power");
      r.power = PowerSummary{number_member(power, "power_w"), number_member(power, "window_s"),
                             count(power, "steps"), optional_number(power, "sm_clock_mhz")};
    }
    rounds.push_back(r);
  }
  return combine_sustained_rounds(std::move(rounds), string_member(reply, "monitor"));
}

json::Object memory_to_json(const MemoryUse &m) {
  return {{"input_bytes", m.input_bytes},
          {"output_bytes", m.output_bytes},
          {"workspace_bytes", m.workspace_bytes},
          {"peak_bytes", m.peak_bytes},
          {"measured", m.measured}};
}

MemoryUse memory_from_json(const json::Value &reply) {
  const auto bytes = [&](std::string_view key) {
    const double v = number_member(reply, key);
    if (!(v >= 0.0) || v > 9.0e15) throw std::runtime_error(fmt::format("a worker's {} of {}", key, v));
    return static_cast<std::uint64_t>(v);
  };
  const json::Value &measured = member(reply, "measured");
  if (!measured.is_bool()) throw std::runtime_error("a worker message's \"measured\" is not a boolean");
  return {bytes("input_bytes"), bytes("output_bytes"), bytes("workspace_bytes"), bytes("peak_bytes"),
          measured.as_bool()};
}

namespace {
constexpr EnumName<ElementType> kElementTypeNames[] = {
    {ElementType::bf16, "bf16"}, {ElementType::fp32, "fp32"}, {ElementType::fp64, "fp64"}};
} // namespace

std::string_view element_type_name(ElementType type) {
  return name_in(kElementTypeNames, type, "fp64");
}

std::optional<ElementType> element_type_from_name(std::string_view name) {
  return value_named(kElementTypeNames, name);
}

OutputView output_view_from_json(const json::Value &reply, const unsigned char *data, std::size_t bytes) {
  OutputView view;
  view.loss = double_from_json(member(reply, "loss"));
  const json::Object tensors = object_member(reply, "tensors");
  for (const OutputSlot &slot : kOutputSlots) {
    const json::Value *t = tensors.find(slot.name);
    if (t == nullptr) continue;
    const auto type = element_type_from_name(string_member(*t, "type"));
    const double count = number_member(*t, "count"), offset = number_member(*t, "offset");
    if (!type || !(count >= 0.0) || !(offset >= 0.0))
      throw std::runtime_error(fmt::format("a worker's layout of {} is malformed", slot.name));
    const auto n = static_cast<std::size_t>(count), at = static_cast<std::size_t>(offset);
    const std::size_t size = n * element_bytes(*type);
    if (at > bytes || size > bytes - at)
      throw std::runtime_error(fmt::format("a worker's {} lies outside its shared memory", slot.name));
    view.*slot.member = TensorRef{data + at, *type, static_cast<std::int64_t>(n), false};
  }
  return view;
}

json::Object failure_to_json(const LaneFailure &failure) {
  return {{"ok", false}, {"status", std::string(to_string(failure.status))}, {"reason", failure.reason}};
}

std::optional<LaneFailure> failure_from_reply(const json::Value &reply) {
  const json::Value &ok = member(reply, "ok");
  if (ok.is_bool() && ok.as_bool()) return std::nullopt;
  const auto status = run_status_from_string(string_member(reply, "status"));
  if (!status) throw std::runtime_error("a worker's failure with an unknown status");
  return LaneFailure{*status, string_member(reply, "reason")};
}

} // namespace kibench::worker
